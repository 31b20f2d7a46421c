// A @kubernetes/client-node informer through the load balancer, across forced compaction
// (issue 3, done-when 4). The informer's watch is stopped while its objects change; etcd is
// compacted past its resourceVersion, and every replica is SIGKILLed and restarted in turn,
// so no watch cache holds history back to it. Started again, the informer watches from its
// old resourceVersion, must get 410 Gone, relist, and end with exactly the objects that
// exist (same names, same resourceVersions, same data), then keep following changes.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, KubeConfig, ListWatch, Watch, type V1ConfigMap, type V1ConfigMapList } from '@kubernetes/client-node';
import { createNamespace, jsonOf, sleep, uniqueName, waitFor } from '../harness.js';
import { createEtcdClient } from '../../storage/etcd/client.js';
import { startCluster, etcdRevision, type TestCluster } from './cluster.js';

describe('client-node informer across forced compaction', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  const ns = uniqueName('informer');
  const path = `/api/v1/namespaces/${ns}/configmaps`;

  before(async () => {
    // no compaction but the test's own
    cluster = await startCluster({ etcdCompactionInterval: '0' });
    const c = cluster.lbClient();
    try {
      await createNamespace(c, ns);
    } finally {
      c.close();
    }
  });
  after(async () => {
    await cluster?.stop();
  });

  it('gets 410 after compaction, relists, and holds exactly what exists', async (t) => {
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const create = (name: string, v: string) =>
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data: { v } } });
    for (let i = 0; i < 5; i++) await create(`c${i}`, '0');

    // what the informer does, observed: its lists, its watch requests and their ERROR events
    let lists = 0;
    const watchesFrom: string[] = [];
    const errorEvents: { code?: number; reason?: string }[] = [];
    const watch = new Watch(kc);
    const observed = {
      watch: (
        p: string,
        params: Record<string, string>,
        cb: (phase: string, obj: unknown, raw: unknown) => void,
        done: (err: unknown) => void,
      ) => {
        watchesFrom.push(params.resourceVersion ?? '');
        return watch.watch(
          p,
          params,
          (phase, obj, raw) => {
            if (phase === 'ERROR') errorEvents.push(obj as { code?: number; reason?: string });
            cb(phase, obj, raw);
          },
          done,
        );
      },
    } as unknown as Watch;
    const informer = new ListWatch<V1ConfigMap>(
      path,
      observed,
      async (): Promise<V1ConfigMapList> => {
        lists++;
        return core.listNamespacedConfigMap({ namespace: ns });
      },
      false,
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    // as client-node's documentation says: an informer that fails is started again (but not
    // when the test stopped it: client-node reports its own abort as an error too)
    let running = true;
    const errors: string[] = [];
    informer.on('error', (err) => {
      errors.push(String((err as Error)?.message ?? err));
      if (running) setTimeout(() => running && void informer.start(), 500);
    });

    const lb = cluster.lbClient();
    /** the informer's cache equals a consistent list through the load balancer */
    const matchesServer = async (): Promise<string | undefined> => {
      const list = jsonOf<{ items: { metadata: { name: string; resourceVersion: string }; data?: Record<string, string> }[] }>(
        await lb.get(path),
      );
      const want = list.items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion} ${JSON.stringify(i.data ?? {})}`).sort();
      const got = informer
        .list(ns)
        .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion} ${JSON.stringify(o.data ?? {})}`)
        .sort();
      return JSON.stringify(want) === JSON.stringify(got) ? undefined : `informer ${JSON.stringify(got)}\nserver   ${JSON.stringify(want)}`;
    };
    const converge = async (what: string) => {
      let diff: string | undefined = 'not checked';
      try {
        await waitFor(what, async () => (diff = await matchesServer()) === undefined, 30_000, 100);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${diff}`);
      }
    };

    try {
      await informer.start();
      await converge('the initial list');
      await core.patchNamespacedConfigMap({ name: 'c0', namespace: ns, body: [{ op: 'replace', path: '/data/v', value: '1' }] });
      await converge('the update of c0');
      assert.equal(lists, 1);
      const oldRv = informer.latestResourceVersion();

      // the watch stops; the objects change
      running = false;
      await informer.stop();
      await create('c5', '0');
      await create('c6', '0');
      await core.patchNamespacedConfigMap({ name: 'c1', namespace: ns, body: [{ op: 'replace', path: '/data/v', value: '2' }] });
      await core.deleteNamespacedConfigMap({ name: 'c2', namespace: ns });
      await core.deleteNamespacedConfigMap({ name: 'c3', namespace: ns });

      // etcd forgets everything before now; no replica's watch cache remembers it either
      const rev = await etcdRevision(cluster);
      const etcd = createEtcdClient({ endpoints: cluster.etcd.map((e) => e.url) });
      try {
        await etcd.compact(rev, true);
      } finally {
        etcd.close();
      }
      assert.ok(Number(oldRv) < rev, `the informer's resourceVersion ${oldRv} is older than the compaction at ${rev}`);
      for (const r of cluster.replicas) {
        await r.kill();
        await r.restart();
      }
      // haproxy sees every replica ready again before the informer comes back
      await sleep(2500);

      seen.length = 0;
      running = true;
      await informer.start();
      await converge('the relist after 410');
      assert.deepEqual(
        errorEvents.map((e) => `${e.code} ${e.reason}`),
        ['410 Expired'],
        'the watch from the compacted resourceVersion got one ERROR event, 410 Expired',
      );
      assert.equal(watchesFrom.at(-2), oldRv, 'the informer watched from its old resourceVersion');
      assert.equal(lists, 2, 'and then listed again');
      // (kube-root-ca.crt, which the root CA controller puts into every namespace, is not ours)
      const ours = (names: string[]) => names.filter((n) => /(^| )c\d+$/.test(n));
      assert.deepEqual(ours(seen).sort(), ['add c5', 'add c6', 'delete c2', 'delete c3', 'update c1']);

      // and it keeps following
      await create('c7', '0');
      await core.deleteNamespacedConfigMap({ name: 'c4', namespace: ns });
      await converge('the changes after the relist');
      assert.deepEqual(ours(informer.list(ns).map((o) => o.metadata?.name ?? '')).sort(), ['c0', 'c1', 'c5', 'c6', 'c7']);
      t.diagnostic(`watches from ${JSON.stringify(watchesFrom)}; ${lists} lists; errors the informer reported: ${JSON.stringify(errors)}`);
    } finally {
      running = false;
      await informer.stop();
      lb.close();
    }
  });
});
