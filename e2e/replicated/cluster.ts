// The replicated cluster the tests in this folder run against: 3 etcd members, 3 kapi
// replicas, haproxy in TCP mode in front (deploy/local-cluster.ts), plus what the tests need
// on top: raw HTTPS clients per replica and through the load balancer, and clean-up of the
// cluster's directory.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalCluster, type ClusterProcess, type LocalCluster } from '../../deploy/local-cluster.js';
import { KubeHttpClient, loadKubeconfig, type ClientCredentials } from '../http-client.js';
import { createEtcdClient } from '../../storage/etcd/client.js';
import { etcdctl, sleep } from '../harness.js';

export type { ClusterProcess, LocalCluster };

export interface StartClusterOptions {
  replicas?: number;
  etcdMembers?: number;
  kapiArgs?: string[];
  etcdCompactionInterval?: string;
}

export interface TestCluster extends LocalCluster {
  /** the admin credentials (one CA and one admin certificate for every replica) */
  creds: ClientCredentials;
  /** a new raw client straight at replica `i` (the caller closes it) */
  replicaClient(i: number, opts?: { maxSockets?: number }): KubeHttpClient;
  /** a new raw client through the load balancer (the caller closes it) */
  lbClient(opts?: { maxSockets?: number }): KubeHttpClient;
  /** the etcd client URLs, comma separated */
  etcdEndpoints: string;
  /** the lines of a process's log (e.g. 'kapi-0') that match `pattern` */
  logLines(name: string, pattern: RegExp): string[];
}

/** starts a cluster in a fresh temporary directory; stop() also removes the directory */
export async function startCluster(opts: StartClusterOptions = {}): Promise<TestCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-cluster-'));
  let cluster: LocalCluster;
  try {
    cluster = await startLocalCluster({ dir, ...opts });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const creds = loadKubeconfig(cluster.kubeconfig);
  return {
    ...cluster,
    replicas: cluster.replicas,
    etcd: cluster.etcd,
    creds,
    etcdEndpoints: cluster.etcd.map((e) => e.url).join(','),
    replicaClient: (i, o) => new KubeHttpClient({ ...creds, server: cluster.replicas[i]!.url }, o),
    lbClient: (o) => new KubeHttpClient({ ...creds, server: cluster.lbURL }, o),
    replicaKubeconfig: (i) => cluster.replicaKubeconfig(i),
    logLines(name, pattern) {
      try {
        return readFileSync(path.join(dir, 'logs', `${name}.log`), 'utf8')
          .split('\n')
          .filter((l) => pattern.test(l));
      } catch {
        return [];
      }
    },
    async stop() {
      try {
        await cluster.stop();
      } finally {
        // KAPI_KEEP_CLUSTER=1 keeps the directory (logs, data) for a look after a failure
        if (!process.env.KAPI_KEEP_CLUSTER) rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** etcd's current revision, asked of any member */
export async function etcdRevision(cluster: LocalCluster): Promise<number> {
  const client = createEtcdClient({ endpoints: cluster.etcd.filter((e) => e.running()).map((e) => e.url) });
  try {
    return (await client.status()).header.revision;
  } finally {
    client.close();
  }
}

/** the index in cluster.etcd of the member that leads */
export async function etcdLeader(cluster: LocalCluster): Promise<number> {
  for (let i = 0; i < cluster.etcd.length; i++) {
    if (!cluster.etcd[i]!.running()) continue;
    const client = createEtcdClient({ endpoints: [cluster.etcd[i]!.url] });
    try {
      const s = await client.status();
      if (s.header.memberId === s.leader) return i;
    } catch {
      // a member that does not answer does not lead
    } finally {
      client.close();
    }
  }
  throw new Error('no etcd member says it leads');
}

/** makes member `i` the etcd leader (etcdctl move-leader), so that killing it both breaks
 *  the replicas' etcd connections (they all start on the first endpoint) and forces an
 *  election */
export async function makeEtcdLeader(cluster: LocalCluster, i: number): Promise<void> {
  const target = cluster.etcd[i]!;
  const idOf = async (url: string): Promise<string> => {
    const client = createEtcdClient({ endpoints: [url] });
    try {
      return (await client.status()).header.memberId;
    } finally {
      client.close();
    }
  };
  const targetId = await idOf(target.url);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const leader = await etcdLeader(cluster);
    if (leader === i) return;
    const r = await etcdctl(cluster.etcd[leader]!.url, ['move-leader', targetId]);
    if (r.code === 0 && (await etcdLeader(cluster)) === i) return;
    if (Date.now() > deadline) throw new Error(`etcdctl move-leader ${targetId}: ${r.stderr}`);
    await sleep(200);
  }
}
