// `kapi certs`: the shared PKI of a replicated control plane, like `kubeadm init phase certs`.
// It writes into one directory what every replica then starts from (`--cert-dir <dir>`):
// the CA, a serving certificate that names the load balancer (and 127.0.0.1, localhost and
// the kubernetes Service's names and IP), the admin client certificate, the ServiceAccount
// key pair, and `admin.kubeconfig` pointing at the load balancer. Running it again reuses
// what is there (adding names to the serving certificate when asked for more).

import path from 'node:path';
import { ensurePki, type Pki } from '../pki/pki.js';
import { writeKubeconfig } from '../kubeconfig/kubeconfig.js';
import { firstAddress, parseCidr } from '../allocators/cidr.js';
import { FlagError, formatFlagHelp, parseFlagSet, type FlagSpec } from '../machinery/flagset.js';

const G = 'certs';

export const CERTS_FLAGS: readonly FlagSpec[] = [
  {
    group: G,
    name: 'dir',
    kind: 'string',
    default: '',
    usage: 'Directory to write the PKI into (created if missing); every replica starts with --cert-dir pointing at it. Required.',
  },
  {
    group: G,
    name: 'server-name',
    kind: 'stringArray',
    default: [],
    usage:
      "The load balancer's DNS name or IP (repeatable or comma separated); put into the serving certificate. The first one is the kubeconfig's host unless --lb-url is given.",
  },
  {
    group: G,
    name: 'san',
    kind: 'stringArray',
    default: [],
    usage: "Extra DNS name or IP for the serving certificate (repeatable or comma separated), e.g. each replica's host name.",
  },
  {
    group: G,
    name: 'lb-url',
    kind: 'string',
    default: '',
    usage: 'The URL clients reach the load balancer at, written into admin.kubeconfig.',
    defaultText: '"https://<first --server-name>:6443"',
  },
  {
    group: G,
    name: 'kubeconfig',
    kind: 'string',
    default: '',
    usage: 'Where to write the admin kubeconfig.',
    defaultText: '"<dir>/admin.kubeconfig"',
  },
  {
    group: G,
    name: 'service-cluster-ip-range',
    kind: 'string',
    default: '10.96.0.0/12',
    usage: "The replicas' --service-cluster-ip-range; its first address (the kubernetes Service's) goes into the serving certificate.",
  },
  { group: G, name: 'help', kind: 'bool', default: false, usage: 'help for certs', shorthand: 'h' },
];

export interface CertsOptions {
  dir: string;
  /** the load balancer's names (entries may be comma separated); the first is the kubeconfig's host unless lbURL is given */
  serverNames: string[];
  sans?: string[];
  lbURL?: string;
  /** default <dir>/admin.kubeconfig */
  kubeconfig?: string;
  /** default 10.96.0.0/12 */
  serviceClusterIPRange?: string;
}

export interface CertsResult {
  pki: Pki;
  kubeconfig: string;
  lbURL: string;
}

export const CERTS_SUMMARY =
  'certs    write a shared PKI (CA, serving certificate, ServiceAccount keys, admin.kubeconfig) for replicas behind a load balancer';

export function certsHelp(): string {
  return [
    'Write the PKI that every kapi replica of one cluster shares, into one directory.',
    '',
    'The directory gets ca.crt/ca.key, apiserver.crt/apiserver.key (for the --server-name and',
    "--san names, 127.0.0.1, localhost and the kubernetes Service's names and IP),",
    'admin.crt/admin.key, sa.key/sa.pub and admin.kubeconfig (pointing at --lb-url).',
    'Start every replica with --cert-dir <dir>. Running it again keeps what is there.',
    '',
    'Usage:',
    '  kapi certs --dir <dir> --server-name <load balancer host> [--san <name> ...] [--lb-url https://host:port]',
    '',
    formatFlagHelp(CERTS_FLAGS),
  ].join('\n');
}

function splitList(values: string[]): string[] {
  return values
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function hostForURL(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Writes (or completes) the shared PKI and the admin kubeconfig. */
export async function writeClusterPki(opts: CertsOptions): Promise<CertsResult> {
  const dir = path.resolve(opts.dir);
  const serverNames = splitList(opts.serverNames);
  if (serverNames.length === 0 && !opts.lbURL) {
    throw new FlagError("--server-name (the load balancer's host) or --lb-url is required");
  }
  let lbURL = opts.lbURL ?? `https://${hostForURL(serverNames[0]!)}:6443`;
  let lbHost: string;
  try {
    const u = new URL(lbURL);
    if (u.protocol !== 'https:') throw new Error('not https');
    lbHost = u.hostname.replace(/^\[|\]$/g, '');
    lbURL = `https://${u.host}`;
  } catch {
    throw new FlagError(`--lb-url ${JSON.stringify(opts.lbURL)} is not an https://host[:port] URL`);
  }
  let kubernetesServiceIP: string;
  try {
    const first = (opts.serviceClusterIPRange ?? '10.96.0.0/12').split(',')[0]!.trim();
    kubernetesServiceIP = firstAddress(parseCidr(first));
  } catch (err) {
    throw new FlagError(`--service-cluster-ip-range: ${(err as Error).message}`);
  }
  const pki = await ensurePki({
    certDir: dir,
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    clientCaFile: '',
    kubernetesServiceIP,
    extraSans: [...serverNames, lbHost, ...splitList(opts.sans ?? [])],
  });
  if (!pki.admin) throw new Error('no admin client certificate was issued');
  const kubeconfig = path.resolve(opts.kubeconfig ?? path.join(dir, 'admin.kubeconfig'));
  writeKubeconfig(kubeconfig, {
    server: lbURL,
    caPem: pki.servingCaPem,
    clientCertPem: pki.admin.certPem,
    clientKeyPem: pki.admin.keyPem,
  });
  return { pki, kubeconfig, lbURL };
}

/** `kapi certs ...`: returns the exit code. */
export async function runCerts(argv: readonly string[], out: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  let values;
  try {
    values = parseFlagSet(argv, CERTS_FLAGS, 'kapi certs').values;
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`Error: ${err.message}\nRun 'kapi certs --help' for usage.\n`);
      return 1;
    }
    throw err;
  }
  if (values.get('help')) {
    out(certsHelp() + '\n');
    return 0;
  }
  const dir = values.get('dir') as string;
  const get = (name: string): string => values.get(name) as string;
  try {
    if (dir === '') throw new FlagError('--dir is required');
    const result = await writeClusterPki({
      dir,
      serverNames: values.get('server-name') as string[],
      sans: values.get('san') as string[],
      lbURL: get('lb-url') || undefined,
      kubeconfig: get('kubeconfig') || undefined,
      serviceClusterIPRange: get('service-cluster-ip-range'),
    });
    const rel = (p: string): string => {
      const r = path.relative(process.cwd(), p);
      return r.startsWith('..') ? p : r;
    };
    out(
      [
        `PKI in ${rel(result.pki.certDir)}; admin kubeconfig ${rel(result.kubeconfig)} (server ${result.lbURL}).`,
        `Start every replica with: kapi --cert-dir ${rel(result.pki.certDir)} --etcd-servers <etcd URLs> ...`,
        '',
      ].join('\n'),
    );
    return 0;
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`Error: ${err.message}\nRun 'kapi certs --help' for usage.\n`);
      return 1;
    }
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
}
