import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NonResourceRequest } from '../request/non-resource.js';
import { createStatusHandler } from './status-handler.js';
import { collectStatus, REPLICA_DOWN_AFTER_MS, type StatusSources, type StatusSnapshot } from './status-snapshot.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

function lease(name: string, renewedAgoMs: number) {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': 'h' } },
    spec: { holderIdentity: `kapi-${name}`, renewTime: new Date(NOW - renewedAgoMs).toISOString() },
  };
}

function sources(total: { n: number }): StatusSources {
  return {
    identity: 'kapi-a',
    leaseName: 'apiserver-a',
    version: 'v1.33.0',
    startedAt: new Date(NOW - 1000),
    identityLeases: async () => [lease('apiserver-b', REPLICA_DOWN_AFTER_MS + 1), lease('apiserver-a', 1000), lease('apiserver-c', 1000)],
    requests: async () => ({ inFlight: { readOnly: 2, mutating: 1 }, longRunning: 4, total: total.n }),
    watchCache: {
      revision: () => 90,
      stats: () => [{ prefix: '/pods/', objects: 3, watchers: 2, bookmarksSent: 5, historyStartRevision: 10 }],
      resourceNameOf: (p) => (p === '/pods/' ? 'pods' : p),
    },
    priorityLevels: () => [{ name: 'exempt', exempt: true, draining: false }],
    etcd: {
      memberList: async () => [
        { id: '1', name: 'etcd-0', peerURLs: [], clientURLs: ['http://127.0.0.1:1'], isLearner: false },
        { id: '2', name: 'etcd-1', peerURLs: [], clientURLs: ['http://127.0.0.1:2'], isLearner: false },
      ],
      endpointStatuses: async () => [
        {
          endpoint: 'http://127.0.0.1:1',
          status: {
            header: { revision: 100, clusterId: '', memberId: '', raftTerm: 1 },
            version: '3.5',
            dbSize: 10,
            leader: '1',
            raftIndex: 1,
            raftTerm: 1,
          },
        },
        { endpoint: 'http://127.0.0.1:2', error: 'connection refused' },
      ],
      compactedRevision: async () => 50,
    },
  };
}

test('collectStatus: replicas up or down by their Lease renewals, cache lag, etcd members', async () => {
  const s = await collectStatus(sources({ n: 7 }), NOW);
  assert.deepEqual(
    s.replicas.map((r) => [r.leaseName, r.up, r.self]),
    [
      ['apiserver-a', true, true],
      ['apiserver-b', false, false],
      ['apiserver-c', true, false],
    ],
  );
  assert.equal(s.replicas[0]!.version, 'v1.33.0');
  assert.equal(s.replicas[2]!.version, undefined);
  assert.equal(s.watchCache.lagRevisions, 10);
  assert.deepEqual(s.watchCache.resources, [{ resource: 'pods', objects: 3, watchers: 2, bookmarksSent: 5, historyStartRevision: 10 }]);
  assert.equal(s.etcd.leader, 'etcd-0');
  assert.deepEqual(
    s.etcd.members.map((m) => [m.name, m.healthy, m.leader, m.error]),
    [
      ['etcd-0', true, true, undefined],
      ['etcd-1', false, false, 'connection refused'],
    ],
  );
  assert.equal(s.etcd.compactedRevision, 50);
});

test('/status serves the page, /status?format=json the snapshot with a rate from the previous look', async () => {
  const total = { n: 100 };
  const handler = createStatusHandler(sources(total));
  const req = (query: string): NonResourceRequest => ({ method: 'GET', path: '/status', query: new URLSearchParams(query), headers: {} });
  const page = await handler(req(''));
  assert.equal(page?.contentType, 'text/html; charset=utf-8');
  assert.match(page!.body.toString(), /<script>/);
  assert.doesNotMatch(page!.body.toString(), /(src|href)="(https?:)?\/\//, 'no external assets');
  const first = JSON.parse((await handler(req('format=json')))!.body.toString()) as StatusSnapshot;
  assert.equal(first.requests.perSecond, undefined);
  total.n = 150;
  await new Promise((r) => setTimeout(r, 20));
  const second = JSON.parse((await handler(req('format=json')))!.body.toString()) as StatusSnapshot;
  assert.ok(second.requests.perSecond! > 0);
  assert.equal(await handler({ ...req(''), path: '/statusz' }), undefined);
});
