// A local replicated control plane for tests: etcd members, kapi replicas sharing one PKI,
// and haproxy (TCP, /readyz health checks) in front, all on 127.0.0.1 with free ports, all
// children of the calling process and stopped by PID. See deploy/lib/cluster.ts for the
// directory layout; `node dist/deploy/cluster-cli.js` drives the same cluster from a shell.
//
//   const cluster = await startLocalCluster({ dir });
//   t.after(() => cluster.stop());
//   kubectl --kubeconfig cluster.kubeconfig ...        // through the load balancer
//   await cluster.replicas[1].kill(); await cluster.replicas[1].restart();

import { launchCluster } from './lib/cluster.js';
import type { ManagedProcess } from './lib/process.js';

export interface LocalCluster {
  dir: string;
  /** https://127.0.0.1:<haproxy port> */
  lbURL: string;
  /** <dir>/admin.kubeconfig (points at the load balancer) */
  kubeconfig: string;
  /** kapi replicas; each has url https://127.0.0.1:<port> */
  replicas: ClusterProcess[];
  /** etcd members; url = client URL */
  etcd: ClusterProcess[];
  haproxy: ClusterProcess;
  /** kubeconfig pointing straight at replica i */
  replicaKubeconfig(i: number): string;
  /** stops everything it started, by PID */
  stop(): Promise<void>;
}

export interface ClusterProcess {
  name: string;
  url: string;
  pid: number;
  /** SIGTERM, wait for exit */
  stop(): Promise<void>;
  /** SIGKILL, wait for exit */
  kill(): Promise<void>;
  /** start again with the same ports, data and flags; wait until healthy/ready */
  restart(): Promise<void>;
  running(): boolean;
}

function view(p: ManagedProcess): ClusterProcess {
  return {
    name: p.name,
    url: p.url,
    get pid() {
      return p.pid;
    },
    stop: () => p.stop(),
    kill: () => p.kill(),
    restart: () => p.restart(),
    running: () => p.running(),
  };
}

export async function startLocalCluster(opts: {
  dir: string;
  /** default 3 */
  replicas?: number;
  /** default 3 */
  etcdMembers?: number;
  /** extra flags for every kapi replica */
  kapiArgs?: string[];
  /** kapi's --etcd-compaction-interval (e.g. '0' to switch compaction off, '1m') */
  etcdCompactionInterval?: string;
}): Promise<LocalCluster> {
  const cluster = await launchCluster({ ...opts, detached: false });
  // if the test process exits without stop() (a failed assertion, an uncaught error), its
  // children must not outlive it
  const onExit = (): void => {
    for (const p of cluster.all()) p.killNow();
  };
  process.on('exit', onExit);
  return {
    dir: cluster.state.dir,
    lbURL: cluster.state.lbURL,
    kubeconfig: cluster.state.kubeconfig,
    replicas: cluster.replicas.map(view),
    etcd: cluster.etcd.map(view),
    haproxy: view(cluster.haproxy),
    replicaKubeconfig: (i) => cluster.replicaKubeconfig(i),
    async stop() {
      try {
        await cluster.stop();
      } finally {
        process.off('exit', onExit);
      }
    },
  };
}
