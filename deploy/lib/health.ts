// When a cluster process counts as up: an etcd member answers /health with "true" (it has a
// leader), a kapi replica (or the load balancer in front of them) answers /readyz with 200.

import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';

export type HealthSpec =
  | { kind: 'etcd'; url: string }
  /** GET <url>/readyz with the admin client certificate, trusting the cluster CA */
  | { kind: 'readyz'; url: string; caFile: string; certFile: string; keyFile: string };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function get(url: string, tls: https.RequestOptions | undefined, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, { ...tls, agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

/** One check: resolves with undefined when healthy, or a reason when not. */
export async function checkHealth(spec: HealthSpec, timeoutMs = 2000): Promise<string | undefined> {
  try {
    if (spec.kind === 'etcd') {
      const r = await get(`${spec.url}/health`, undefined, timeoutMs);
      if (r.status === 200 && /"health"\s*:\s*"true"/.test(r.body)) return undefined;
      return `/health: ${r.status} ${r.body.trim()}`;
    }
    const tls: https.RequestOptions = {
      ca: readFileSync(spec.caFile),
      cert: readFileSync(spec.certFile),
      key: readFileSync(spec.keyFile),
    };
    const r = await get(`${spec.url}/readyz`, tls, timeoutMs);
    if (r.status === 200) return undefined;
    return `/readyz: ${r.status} ${r.body.trim().slice(0, 300)}`;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Polls until healthy; throws at the deadline or when the process has exited. */
export async function waitHealthy(spec: HealthSpec, opts: { timeoutMs: number; stillRunning?: () => boolean }): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let last = '';
  for (;;) {
    const reason = await checkHealth(spec);
    if (reason === undefined) return;
    last = reason;
    if (opts.stillRunning && !opts.stillRunning()) throw new Error(`it exited (last check: ${last})`);
    if (Date.now() > deadline) throw new Error(`not healthy within ${opts.timeoutMs / 1000}s (last check: ${last})`);
    await sleep(200);
  }
}
