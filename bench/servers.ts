// The etcd and kapi the benchmarks start: kapi as issue 9's comparison ran kube-apiserver (a
// system:masters bearer token, RBAC, default admission without ServiceAccount, no endpoint
// reconciler), on an etcd of its own with room for the Pods' revisions.

import { startEtcd, startKapi, type EtcdProcess, type StartKapiOptions } from '../e2e/harness.js';

export function startBenchEtcd(): Promise<EtcdProcess> {
  return startEtcd({ extraArgs: ['--quota-backend-bytes', String(8 * 1024 * 1024 * 1024)] });
}

/** `opts.extraArgs` come after the bench's own */
export function startBenchKapi(etcd: EtcdProcess, tokenFile: string, opts: StartKapiOptions = {}) {
  return startKapi({
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
}
