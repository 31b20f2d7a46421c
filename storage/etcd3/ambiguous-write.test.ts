// Writes whose answer is lost when the etcd member kapi talks to dies: each is resolved by
// reading the key back once the cluster answers again, so a client sees its write succeed
// exactly once or fail cleanly, never a 503 for a write that was applied. Real three-member
// etcd cluster; the member in use is SIGKILLed while writers run.

import { rmSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEtcdClient } from '../etcd/client.js';
import { eventually, startCluster } from '../testing/etcd-cluster.js';
import { createEtcd3Store } from './store.js';
import type { KubeObject } from '../interface.js';

const configMap = (name: string, v: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
  data: { v },
});

test('creates, updates and deletes in flight when the member in use dies all resolve', { timeout: 180_000 }, async () => {
  const members = await startCluster(3);
  const client = createEtcdClient({ endpoints: members.map((m) => m.endpoint) });
  const store = createEtcd3Store(client, { prefix: '/ambiguous' });
  let killed = false;
  try {
    await eventually(() => client.memberList());
    let stop = false;
    const failures: string[] = [];
    const created = new Map<string, string>();
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${i}`;
        const key = `/configmaps/ns/${name}`;
        try {
          await store.create(key, configMap(name, 'a'));
          created.set(key, 'a');
          await store.guaranteedUpdate(key, (cur) => ({ ...cur!, data: { v: 'b' } }));
          created.set(key, 'b');
          if (i % 3 === 0) {
            await store.delete(key);
            created.delete(key);
          }
        } catch (err) {
          failures.push(`${name}: ${(err as Error).message}`);
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await new Promise((r) => setTimeout(r, 1000));
    // the client talks to the first member until it fails
    await members[0]!.kill();
    killed = true;
    await new Promise((r) => setTimeout(r, 3000));
    stop = true;
    await Promise.all(writers);
    assert.deepEqual(failures, [], 'writes failed although the cluster kept a quorum');
    // what each writer was told is what etcd holds
    for (const [key, v] of created) {
      const obj = await store.get(key);
      assert.equal((obj?.data as Record<string, string> | undefined)?.v, v, key);
    }
    assert.ok(created.size > 0);
  } finally {
    client.close();
    for (const [i, m] of members.entries()) {
      // a killed member's stop() would signal a pid that is gone; its data directory is left
      if (i === 0 && killed) rmSync(m.dataDir, { recursive: true, force: true });
      else await m.stop();
    }
  }
});
