// A small etcd cluster for tests: `size` members on free loopback ports, each stopped by its
// PID through the EtcdProcess it returns.

import { freePort, startEtcd, type EtcdProcess } from './etcd-server.js';

export async function startCluster(size: number): Promise<EtcdProcess[]> {
  const members: Array<{ name: string; clientPort: number; peerPort: number }> = [];
  for (let i = 0; i < size; i++) members.push({ name: `m${i}`, clientPort: await freePort(), peerPort: await freePort() });
  const initialCluster = members.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
  const token = `kapi-test-${members[0]!.peerPort}`;
  const started: EtcdProcess[] = [];
  try {
    // each member binds its client port before the cluster has formed, so one by one works
    for (const m of members) {
      const peer = `http://127.0.0.1:${m.peerPort}`;
      started.push(
        await startEtcd({
          clientPort: m.clientPort,
          extraArgs: [
            '--name',
            m.name,
            '--listen-peer-urls',
            peer,
            '--initial-advertise-peer-urls',
            peer,
            '--initial-cluster',
            initialCluster,
            '--initial-cluster-token',
            token,
            '--initial-cluster-state',
            'new',
          ],
        }),
      );
    }
  } catch (err) {
    for (const p of started) await p.stop();
    throw err;
  }
  return started;
}

/** retries `fn` while the cluster elects a leader (its first, or after a member died) */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
