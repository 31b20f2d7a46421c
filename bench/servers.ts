// The etcd and kapi the benchmarks start: kapi as issue 9's comparison ran kube-apiserver (a
// system:masters bearer token, RBAC, default admission without ServiceAccount, no endpoint
// reconciler), on an etcd of its own with room for the Pods' revisions.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startEtcd, startKapi, waitFor, type EtcdProcess, type KapiProcess, type StartKapiOptions } from '../e2e/harness.js';

/** a fresh system:masters bearer token, written as kapi's --token-auth-file in `dir` */
export function writeBenchToken(dir: string): { token: string; tokenFile: string } {
  const token = `bench-${Math.random().toString(36).slice(2)}`;
  const tokenFile = path.join(dir, 'tokens.csv');
  writeFileSync(tokenFile, `${token},bench-admin,bench-admin-uid,"system:masters"\n`);
  return { token, tokenFile };
}

export function startBenchEtcd(): Promise<EtcdProcess> {
  return startEtcd({ extraArgs: ['--quota-backend-bytes', String(8 * 1024 * 1024 * 1024)] });
}

/** `opts.extraArgs` come after the bench's own; with `--workers N` (N > 1) among them, ready once
 *  every worker is (/readyz answers as soon as one listens) */
export async function startBenchKapi(etcd: EtcdProcess, tokenFile: string, opts: StartKapiOptions = {}): Promise<KapiProcess> {
  const kapi = await startKapi({
    ...opts,
    etcdServers: etcd.endpoint,
    extraArgs: [
      '--token-auth-file',
      tokenFile,
      '--authorization-mode',
      'RBAC',
      '--disable-admission-plugins',
      'ServiceAccount',
      '--endpoint-reconciler-type',
      'none',
      ...(opts.extraArgs ?? []),
    ],
  });
  const extra = opts.extraArgs ?? [];
  const workersAt = extra.indexOf('--workers');
  if (workersAt >= 0 && Number(extra[workersAt + 1]) > 1) {
    await waitFor('every kapi worker ready', () => /workers\] kapi is ready/.test(kapi.logs()), 120_000);
  }
  return kapi;
}
