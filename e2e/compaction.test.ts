// Done-when 6: after etcd compaction, a watch from a compacted resourceVersion gets 410
// (kube-apiserver's watch cache: HTTP 200 and a single ERROR event carrying a 410 Expired
// Status), and an old continue token gets 410 Expired. kapi runs against an etcd this test
// started, so the test compacts it with etcdctl.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { etcdctl, etcdRevision, jsonOf, startEtcd, startKapi, uniqueName, type EtcdProcess, type KapiProcess } from './harness.js';

interface Status {
  kind: string;
  apiVersion: string;
  metadata: { continue?: string };
  status: string;
  message: string;
  reason: string;
  code: number;
}
interface List {
  metadata: { resourceVersion: string; continue?: string };
  items: { metadata: { name: string } }[];
}

const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without ' +
  'the continue parameter, or use the continue token in this response to retrieve the remainder of the results. ' +
  'Continuing with the provided token results in an inconsistent list - objects that were created, modified, or ' +
  'deleted between the time the first chunk was returned and now may show up in the list.';

function assertExpired(s: Status): void {
  assert.equal(s.kind, 'Status');
  assert.equal(s.apiVersion, 'v1');
  assert.equal(s.status, 'Failure');
  assert.equal(s.code, 410);
  assert.equal(s.reason, 'Expired');
  assert.match(s.message, /^too old resource version: \d+ \(\d+\)$/);
}

describe('compaction', () => {
  let etcd: EtcdProcess;
  let kapi: KapiProcess;
  const ns = uniqueName('compact');
  const base = () => `/api/v1/namespaces/${ns}/configmaps`;
  let oldRv = '';
  let oldToken = '';
  let compactedAt = 0;

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-compact-'));

  before(async () => {
    etcd = await startEtcd();
    kapi = await startKapi({ etcdServers: etcd.endpoint, etcdCompactionInterval: '1h', dataDir });
    const created = await kapi.http.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    assert.equal(created.status, 201, created.body);
    for (let i = 0; i < 5; i++) {
      const r = await kapi.http.post(base(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } });
      assert.equal(r.status, 201, r.body);
    }
    // a resourceVersion and a continue token from before the compaction
    const page = jsonOf<List>(await kapi.http.get(`${base()}?limit=2`));
    oldRv = page.metadata.resourceVersion;
    assert.ok(page.metadata.continue, 'a continue token');
    oldToken = page.metadata.continue;
    // history after it
    for (let i = 0; i < 10; i++) {
      const r = await kapi.http.patch(`${base()}/c0`, { data: { n: String(i) } });
      assert.equal(r.status, 200, r.body);
    }
    compactedAt = await etcdRevision(etcd.endpoint);
    const c = await etcdctl(etcd.endpoint, ['compact', String(compactedAt), '--physical']);
    assert.equal(c.code, 0, c.stderr);
  });
  after(async () => {
    await kapi?.stop();
    await etcd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('etcd itself refuses the old revision (the precondition of this test)', async () => {
    const r = await etcdctl(etcd.endpoint, ['get', '--prefix', '/registry/configmaps', '--rev', oldRv, '--keys-only']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /compacted/);
  });

  it('a running kapi answers a watch from a compacted resourceVersion with 410, or from its cache without a gap', async () => {
    // kube-apiserver's watch cache keeps a window of recent events and serves a watch from it
    // even when etcd has compacted that far: only an RV older than the cache's window is 410.
    // Either answer is kube's; a partial history is not.
    const w = kapi.http.watch(`${base()}?watch=1&resourceVersion=${oldRv}`);
    try {
      const status = await w.status;
      if (status === 200) {
        const first = await w.waitFor(() => true);
        if (first.type === 'ERROR') {
          assertExpired(first.object as unknown as Status);
        } else {
          const last = await w.waitFor((e) => e.type === 'MODIFIED' && (e.object as { data?: { n?: string } }).data?.n === '9');
          const seen = w.events.slice(0, w.events.indexOf(last) + 1);
          assert.deepEqual(
            seen.map((e) => `${e.type} ${(e.object as { data?: { n?: string } }).data?.n}`),
            Array.from({ length: 10 }, (_, i) => `MODIFIED ${i}`),
            'the full history after the resourceVersion, in order',
          );
        }
      } else {
        await w.ended;
        assert.equal(status, 410, w.errorBody);
        assertExpired(JSON.parse(w.errorBody) as Status);
      }
    } finally {
      w.close();
    }
  });

  it('a watch from a current resourceVersion still works after compaction', async () => {
    const rv = jsonOf<List>(await kapi.http.get(base())).metadata.resourceVersion;
    assert.ok(Number(rv) >= compactedAt);
    const w = kapi.http.watch(`${base()}?watch=1&resourceVersion=${rv}`);
    try {
      assert.equal(await w.status, 200);
      assert.equal((await kapi.http.patch(`${base()}/c1`, { data: { after: 'compaction' } })).status, 200);
      const ev = await w.waitFor((e) => e.type === 'MODIFIED');
      assert.equal(ev.object.metadata?.name, 'c1');
    } finally {
      w.close();
    }
  });

  it('a continue token from before the compaction gets 410 Expired', async () => {
    const res = await kapi.http.get(`${base()}?limit=2&continue=${encodeURIComponent(oldToken)}`);
    assert.equal(res.status, 410, res.body);
    const s = jsonOf<Status>(res);
    assert.deepEqual(
      Object.keys(s).filter((k) => k !== 'details'),
      ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'code'],
    );
    assert.equal(s.kind, 'Status');
    assert.equal(s.status, 'Failure');
    assert.equal(s.reason, 'Expired');
    assert.equal(s.code, 410);
    assert.match(s.message, /^The provided continue parameter is too old to display a consistent list result\./);
  });

  it('the 410 for an old continue token offers a token that continues inconsistently (as kube-apiserver)', async () => {
    const s = jsonOf<Status>(await kapi.http.get(`${base()}?limit=2&continue=${encodeURIComponent(oldToken)}`));
    assert.equal(s.message, INCONSISTENT_CONTINUE);
    assert.ok(s.metadata.continue, `a fresh continue token in the Status metadata: ${JSON.stringify(s)}`);
    const rest = await kapi.http.get(`${base()}?limit=10&continue=${encodeURIComponent(s.metadata.continue)}`);
    assert.equal(rest.status, 200, rest.body);
    // the root CA publisher adds kube-root-ca.crt to every namespace, whenever it gets to it
    const names = jsonOf<List>(rest)
      .items.map((i) => i.metadata.name)
      .filter((n) => n !== 'kube-root-ca.crt');
    assert.deepEqual(names, ['c2', 'c3', 'c4']);
  });

  it('after a restart (cache rebuilt above the compaction), a watch from the compacted resourceVersion is a single ERROR event with 410 Expired', async () => {
    const { port } = kapi;
    await kapi.stop();
    kapi = await startKapi({ etcdServers: etcd.endpoint, etcdCompactionInterval: '1h', dataDir, port });
    const w = kapi.http.watch(`${base()}?watch=1&resourceVersion=${oldRv}`);
    try {
      const status = await w.status;
      let s: Status;
      if (status === 200) {
        // kube-apiserver's watch cache: HTTP 200, one ERROR event, then the stream ends
        const ev = await w.waitFor((e) => e.type === 'ERROR');
        await w.ended;
        assert.deepEqual(
          w.events.map((e) => e.type),
          ['ERROR'],
          'a single ERROR event',
        );
        s = ev.object as unknown as Status;
      } else {
        await w.ended;
        assert.equal(status, 410, w.errorBody);
        s = JSON.parse(w.errorBody) as Status;
      }
      assertExpired(s);
    } finally {
      w.close();
    }
  });

  it('a list at an exact compacted resourceVersion gets 410 Expired', async () => {
    const res = await kapi.http.get(`${base()}?resourceVersion=${oldRv}&resourceVersionMatch=Exact`);
    assert.equal(res.status, 410, res.body);
    const s = jsonOf<Status>(res);
    assert.equal(s.reason, 'Expired');
  });
});
