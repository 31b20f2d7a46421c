// Read your writes across replicas (issue 3, done-when 2): a write through replica A is seen
// by an immediate default (consistent) GET and LIST through replica B, every time. Four
// lanes, each in its own namespace, run 300 write-then-read pairs each (1200 in all), with
// A and B rotating over the three replicas; each object goes through create, update (PUT),
// merge patch, PUT and delete. Every stale or failed read is counted and reported.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, uniqueName, type HttpResponse } from '../harness.js';
import type { KubeHttpClient } from '../http-client.js';
import { startCluster, type TestCluster } from './cluster.js';

const LANES = 4;
const PAIRS_PER_LANE = 300;
const OPS = ['create', 'update', 'patch', 'update', 'delete'] as const;

interface CM {
  metadata: { name: string; resourceVersion: string };
  data?: { seq?: string };
}

describe('read your writes across replicas', { timeout: 600_000 }, () => {
  let cluster: TestCluster;
  let clients: KubeHttpClient[];

  before(async () => {
    cluster = await startCluster();
    clients = cluster.replicas.map((_, i) => cluster.replicaClient(i, { maxSockets: 8 }));
  });
  after(async () => {
    for (const c of clients ?? []) c.close();
    await cluster?.stop();
  });

  it(`${LANES * PAIRS_PER_LANE} writes through one replica, each read at once through another: never stale`, async (t) => {
    const failures: string[] = [];
    let pairs = 0;
    let reads = 0;

    const lane = async (laneNo: number): Promise<void> => {
      const ns = uniqueName(`ryw-${laneNo}`);
      await createNamespace(clients[laneNo % clients.length]!, ns);
      const base = `/api/v1/namespaces/${ns}/configmaps`;
      let rv = 0;
      for (let p = 0; p < PAIRS_PER_LANE; p++) {
        const op = OPS[p % OPS.length]!;
        const name = `cm-${Math.floor(p / OPS.length)}`;
        const seq = `${laneNo}-${p}`;
        const a = (p + laneNo) % clients.length;
        // B rotates over both other replicas
        const b = (a + 1 + (Math.floor(p / clients.length) % (clients.length - 1))) % clients.length;
        const writer = clients[a]!;
        const reader = clients[b]!;
        const what = `pair ${laneNo}/${p}: ${op} ${ns}/${name} (seq ${seq}) through replica ${a}, read through replica ${b}`;

        let res: HttpResponse;
        switch (op) {
          case 'create':
            res = await writer.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { seq } });
            break;
          case 'update':
            res = await writer.put(`${base}/${name}`, {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, resourceVersion: String(rv) },
              data: { seq },
            });
            break;
          case 'patch':
            res = await writer.patch(`${base}/${name}`, { data: { seq } });
            break;
          case 'delete':
            res = await writer.delete(`${base}/${name}`);
            break;
        }
        if (res.status < 200 || res.status > 299) {
          failures.push(`${what}: the write failed: HTTP ${res.status} ${res.body.slice(0, 200)}`);
          return;
        }
        pairs++;
        const deleted = op === 'delete';
        if (!deleted) rv = Number((JSON.parse(res.body) as CM).metadata.resourceVersion);

        // GET, default resourceVersion (consistent)
        const got = await reader.get(`${base}/${name}`);
        reads++;
        if (deleted) {
          if (got.status !== 404) failures.push(`${what}: GET answered ${got.status} after the delete (stale: ${got.body.slice(0, 200)})`);
        } else if (got.status !== 200) {
          failures.push(`${what}: GET answered ${got.status}: ${got.body.slice(0, 200)}`);
        } else {
          const obj = JSON.parse(got.body) as CM;
          const gotRv = Number(obj.metadata.resourceVersion);
          if (gotRv < rv || obj.data?.seq !== seq)
            failures.push(`${what}: stale GET: rv ${gotRv} seq ${obj.data?.seq}, written rv ${rv} seq ${seq}`);
        }

        // LIST, default resourceVersion (consistent)
        const listed = await reader.get(base);
        reads++;
        if (listed.status !== 200) {
          failures.push(`${what}: LIST answered ${listed.status}: ${listed.body.slice(0, 200)}`);
          continue;
        }
        const list = JSON.parse(listed.body) as { metadata: { resourceVersion: string }; items: CM[] };
        const listRv = Number(list.metadata.resourceVersion);
        const item = list.items.find((i) => i.metadata.name === name);
        if (deleted) {
          if (item)
            failures.push(`${what}: stale LIST at rv ${listRv}: still has the deleted object (rv ${item.metadata.resourceVersion})`);
        } else if (listRv < rv) {
          failures.push(`${what}: stale LIST: list rv ${listRv} < written rv ${rv}`);
        } else if (!item || Number(item.metadata.resourceVersion) < rv || item.data?.seq !== seq) {
          failures.push(
            `${what}: stale LIST at rv ${listRv}: ${item ? `rv ${item.metadata.resourceVersion} seq ${item.data?.seq}` : 'object missing'}, written rv ${rv} seq ${seq}`,
          );
        }
      }
    };

    await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)));
    t.diagnostic(`${pairs} write-then-read pairs, ${reads} consistent reads through another replica, ${failures.length} stale or failed`);
    assert.ok(pairs >= 1000, `only ${pairs} pairs ran`);
    assert.deepEqual(failures.slice(0, 30), [], `${failures.length} stale or failed reads:\n${failures.slice(0, 30).join('\n')}`);
  });
});
