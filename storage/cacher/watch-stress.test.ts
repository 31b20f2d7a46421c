// Watches started at every kind of resourceVersion while writes pour in: each must deliver
// exactly the changes after its resourceVersion that concern it, once each, in order. Writers
// create, relabel and delete objects in three namespaces through another etcd client (another
// replica, as far as the cache can tell); watchers come and go all along, namespace-scoped or
// not, label-selected or not, from a revision already in the cache's history, from the feed's
// own revision, or from a revision not reached yet. What each watcher saw is checked against
// the writes' own revisions, replayed in order.

import net from 'node:net';
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';

import { createEtcdClient } from '../etcd/client.js';
import type { EtcdClient } from '../etcd/types.js';
import { everything, type SelectionPredicate, type Watch } from '../interface.js';
import { startEtcd, type EtcdProcess } from '../testing/etcd-server.js';
import { labelPredicate, makePod } from '../testing/fixtures.js';
import { createCacheFeed, type CacheFeed } from './index.js';
import { revisionOnlyStore } from './test-support.js';

const NAMESPACES = ['a', 'b', 'c'];
const WRITERS = 4;
const WRITES_PER_WRITER = 400;
const WATCHERS = 60;

interface Change {
  rev: number;
  key: string;
  namespace: string;
  /** the labels after the change; undefined for a deletion */
  labels: Record<string, string> | undefined;
}

interface Scope {
  namespace?: string;
  group?: string;
}

interface Seen {
  type: string;
  key: string;
  rev: number;
}

function inScope(scope: Scope, namespace: string, labels: Record<string, string> | undefined): boolean {
  if (!labels) return false;
  if (scope.namespace !== undefined && scope.namespace !== namespace) return false;
  return scope.group === undefined || labels.group === scope.group;
}

/** what a watch of `scope` from `afterRev` must deliver, replaying every change in order */
function expected(changes: Change[], scope: Scope, afterRev: number): string[] {
  const state = new Map<string, Record<string, string>>();
  const out: string[] = [];
  for (const c of changes) {
    const prev = state.get(c.key);
    if (c.labels) state.set(c.key, c.labels);
    else state.delete(c.key);
    if (c.rev <= afterRev) continue;
    const curIn = inScope(scope, c.namespace, c.labels);
    const prevIn = inScope(scope, c.namespace, prev);
    if (curIn) out.push(`${prevIn ? 'MODIFIED' : 'ADDED'} ${c.key}@${c.rev}`);
    else if (prevIn) out.push(`DELETED ${c.key}@${c.rev}`);
  }
  return out;
}

/** a TCP relay to etcd that can cut every connection through it, as a network failure would */
async function cuttingRelay(target: string): Promise<{ endpoint: string; cuts: () => number; cutAll(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const open = new Set<net.Socket>();
  let cuts = 0;
  const server = net.createServer((downstream) => {
    const upstream = net.connect(Number(port), hostname);
    for (const s of [downstream, upstream]) {
      open.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        open.delete(s);
        downstream.destroy();
        upstream.destroy();
      });
    }
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    cuts: () => cuts,
    cutAll() {
      if (open.size > 0) cuts++;
      for (const s of open) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** writers and watchers over `feed` (which caches `prefix`); every watcher's events checked */
async function writeAndWatch(feed: CacheFeed, prefix: string, other: EtcdClient, t: TestContext): Promise<void> {
  const pods = feed.cacherFor('/pods/');
  const changes: Change[] = [];
  // the cache's history begins where the feed started (a test of its own)
  const historyStart = feed.revision();
  let lastRev = historyStart;
  let writing = true;

  const writer = async (id: number): Promise<void> => {
    for (let i = 0; i < WRITES_PER_WRITER; i++) {
      const namespace = NAMESPACES[(id + i) % NAMESPACES.length]!;
      const name = `w${id}-${i % 7}`;
      const key = `/pods/${namespace}/${name}`;
      const etcdKey = Buffer.from(`${prefix}${key}`);
      if (i % 5 === 4) {
        const res = await other.deleteRange(etcdKey);
        // deleting what is not there changes nothing (and makes no revision)
        if (res.deleted > 0) changes.push({ rev: res.header.revision, key, namespace, labels: undefined });
        lastRev = Math.max(lastRev, res.header.revision);
        continue;
      }
      const labels = { group: `g${(i * 3 + id) % 3}` };
      const res = await other.put(etcdKey, Buffer.from(JSON.stringify(makePod(namespace, name, labels))));
      changes.push({ rev: res.header.revision, key, namespace, labels });
      lastRev = Math.max(lastRev, res.header.revision);
    }
  };

  const watchers: { scope: Scope; from: number; seen: Seen[]; watch: Watch; done: Promise<void> }[] = [];
  const startWatcher = async (n: number): Promise<void> => {
    const scope: Scope = {};
    if (n % 3 !== 0) scope.namespace = NAMESPACES[n % NAMESPACES.length];
    if (n % 2 === 0) scope.group = `g${n % 3}`;
    const predicate: SelectionPredicate = scope.group ? labelPredicate({ group: scope.group }) : everything;
    // from the history, from the feed's own revision, or from one not reached yet
    const base = feed.revision();
    const from =
      n % 4 === 0 ? Math.max(historyStart, base - 1 - (n % 40)) : n % 4 === 1 ? base : n % 4 === 2 ? lastRev : lastRev + 1 + (n % 3);
    const key = scope.namespace ? `/pods/${scope.namespace}/` : '/pods/';
    const watch = await pods.watch(key, { recursive: true, predicate, resourceVersion: String(from), allowWatchBookmarks: true });
    const seen: Seen[] = [];
    const done = (async () => {
      for await (const e of watch) {
        if (e.type === 'BOOKMARK') continue;
        const m = e.object.metadata;
        seen.push({ type: e.type, key: `/pods/${m.namespace}/${m.name}`, rev: Number(m.resourceVersion) });
      }
    })();
    watchers.push({ scope, from, seen, watch, done });
  };

  const writes = Promise.all(Array.from({ length: WRITERS }, (_, id) => writer(id))).finally(() => (writing = false));
  for (let n = 0; n < WATCHERS && writing; n++) {
    await startWatcher(n);
    await new Promise((r) => setTimeout(r, n % 3));
  }
  await writes;
  assert.ok(watchers.length >= 10, `only ${watchers.length} watchers started before the writes ended`);

  changes.sort((x, y) => x.rev - y.rev);
  const finalRev = changes[changes.length - 1]!.rev;
  // every watcher has had everything once the feed has reached the last write
  await feed.feed.waitForRevision(finalRev, 10_000);
  await new Promise((r) => setTimeout(r, 50));
  for (const w of watchers) w.watch.stop();
  await Promise.all(watchers.map((w) => w.done));

  const problems: string[] = [];
  for (const [i, w] of watchers.entries()) {
    const want = expected(changes, w.scope, w.from);
    const got = w.seen.map((s) => `${s.type} ${s.key}@${s.rev}`);
    const at = want.findIndex((x, j) => got[j] !== x);
    if (at >= 0 || got.length !== want.length) {
      const j = at >= 0 ? at : Math.min(want.length, got.length);
      problems.push(
        `watcher ${i} ${JSON.stringify(w.scope)} from ${w.from}: ${got.length} events, ${want.length} expected; first difference at ${j}: got ${got[j] ?? '(none)'}, expected ${want[j] ?? '(none)'}`,
      );
    }
  }
  t.diagnostic(
    `${changes.length} changes, ${watchers.length} watchers, ${watchers.reduce((n, w) => n + w.seen.length, 0)} events delivered`,
  );
  assert.deepEqual(problems, []);
  assert.ok(
    watchers.some((w) => w.seen.length > 0),
    'no watcher saw anything',
  );
}

describe('watch cache under concurrent writes and watches', () => {
  let etcd: EtcdProcess;
  let client: EtcdClient;
  let other: EtcdClient;
  const feeds: CacheFeed[] = [];
  const clients: EtcdClient[] = [];

  before(async () => {
    etcd = await startEtcd();
    client = createEtcdClient({ endpoints: [etcd.endpoint] });
    other = createEtcdClient({ endpoints: [etcd.endpoint] });
  });
  after(async () => {
    for (const f of feeds) f.close();
    for (const c of clients) c.close();
    client?.close();
    other?.close();
    await etcd?.stop();
  });

  test('every watcher gets exactly the changes after its resourceVersion, in order', async (t) => {
    const feed = createCacheFeed(client, revisionOnlyStore(client), { prefix: '/stress' });
    feeds.push(feed);
    await feed.ready;
    await writeAndWatch(feed, '/stress', other, t);
  });

  test("so they do while the feed's etcd connection is cut again and again", async (t) => {
    const relay = await cuttingRelay(etcd.endpoint);
    try {
      const cut = createEtcdClient({ endpoints: [relay.endpoint] });
      clients.push(cut);
      const feed = createCacheFeed(cut, revisionOnlyStore(cut), { prefix: '/stress-cut' });
      feeds.push(feed);
      await feed.ready;
      const cutter = setInterval(() => relay.cutAll(), 120);
      try {
        await writeAndWatch(feed, '/stress-cut', other, t);
      } finally {
        clearInterval(cutter);
      }
      t.diagnostic(`${relay.cuts()} cuts`);
      assert.ok(relay.cuts() >= 3, `the connection was cut only ${relay.cuts()} times`);
    } finally {
      await relay.close();
    }
  });
});
