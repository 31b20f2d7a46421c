// haproxy in front of the local replicas: TCP mode (TLS passes through, kapi authenticates
// the client certificate itself), a replica in the pool only while its /readyz answers 200.

export interface HaproxyConfigOptions {
  /** 127.0.0.1 port the load balancer listens on */
  port: number;
  /** a unix socket for `show stat` (tests read each replica's state from it) */
  statsSocket: string;
  replicas: { name: string; port: number }[];
}

export function haproxyConfig(opts: HaproxyConfigOptions): string {
  return [
    '# written by deploy/local-cluster.ts; regenerated on every start',
    'global',
    '  maxconn 4096',
    // server up/down transitions (notice and above), not a line per connection
    '  log stdout format raw local0 notice',
    `  stats socket ${opts.statsSocket} mode 600 level user`,
    '',
    'defaults',
    '  mode tcp',
    '  log global',
    '  timeout connect 2s',
    // watches are long-lived streams (kapi ends them within 2 x --min-request-timeout)
    '  timeout client 1h',
    '  timeout server 1h',
    '  timeout tunnel 1h',
    // a replica that died refuses connections until the checks notice: try another one
    '  retries 3',
    '  option redispatch 1',
    '',
    'frontend kapi',
    `  bind 127.0.0.1:${opts.port}`,
    '  default_backend kapi_replicas',
    '',
    'backend kapi_replicas',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  default-server check check-ssl verify none inter 1s fall 2 rise 2',
    ...opts.replicas.map((r) => `  server ${r.name} 127.0.0.1:${r.port}`),
    '',
  ].join('\n');
}
