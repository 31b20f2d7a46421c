// The monitor against a scripted resource (list pages and watch streams given in advance),
// to check what it makes of a relist after a broken watch; the real registry and etcd are
// exercised by garbage-collector.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject, Watch, WatchEvent } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import type { ListObject, ListRequestOptions, RESTResource, WatchRequestOptions } from '../../registry/rest.js';
import { silentLogger } from '../types.js';
import type { GraphEvent } from './graph-builder.js';
import { ResourceMonitor } from './monitor.js';

const info = { group: 'apps', version: 'v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true } as ResourceInfo;

function obj(name: string, uid: string, rv: string, owners: string[] = []): KubeObject {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid,
      resourceVersion: rv,
      ...(owners.length ? { ownerReferences: owners.map((o) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name: o, uid: o })) } : {}),
    },
  };
}

/** a watch that yields `events`, then ends (`end: true`) or waits until stopped */
function scriptedWatch(events: WatchEvent[], end: boolean): Watch {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  return {
    stop: () => stop(),
    async *[Symbol.asyncIterator]() {
      yield* events;
      if (!end) await stopped;
    },
  };
}

class ScriptedResource {
  readonly info = info;
  readonly lists: Array<{ pages: ListObject[] }> = [];
  readonly watches: Array<{ events: WatchEvent[]; end: boolean }> = [];
  readonly watchedFrom: Array<string | undefined> = [];
  readonly listOptions: ListRequestOptions[] = [];
  private listPage = 0;

  async list(_ctx: unknown, opts: ListRequestOptions): Promise<ListObject> {
    this.listOptions.push(opts);
    const current = this.lists[0];
    assert.ok(current, 'an unexpected list');
    const page = current.pages[this.listPage++]!;
    if (this.listPage === current.pages.length) {
      this.lists.shift();
      this.listPage = 0;
    }
    return page;
  }

  async watch(_ctx: unknown, opts: WatchRequestOptions): Promise<Watch> {
    this.watchedFrom.push(opts.resourceVersion);
    const next = this.watches.shift();
    return next ? scriptedWatch(next.events, next.end) : scriptedWatch([], false);
  }
}

function page(rv: string, items: KubeObject[], cont = ''): ListObject {
  return { apiVersion: 'apps/v1', kind: 'ReplicaSetList', metadata: { resourceVersion: rv, ...(cont ? { continue: cont } : {}) }, items };
}

function summary(ev: GraphEvent): string {
  const owners = ev.object.ownerReferences.map((r) => r.uid).join('+');
  return `${ev.type} ${ev.object.name}/${ev.object.uid}${owners ? ` owners=${owners}` : ''}${ev.old ? ` old=${ev.old.uid}` : ''}`;
}

test('a relist after a broken watch reports what changed meanwhile, deletions and re-creations included', async () => {
  const res = new ScriptedResource();
  res.lists.push({ pages: [page('10', [obj('a', 'a1', '5'), obj('b', 'b1', '6')], 'more'), page('10', [obj('c', 'c1', '7', ['d1'])])] });
  res.watches.push({
    events: [
      { type: 'MODIFIED', object: obj('a', 'a1', '11') }, // nothing the graph cares about
      { type: 'MODIFIED', object: obj('a', 'a1', '12', ['d1']) },
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '13' } } },
    ],
    end: true,
  });
  res.watches.push({ events: [{ type: 'ERROR', object: { metadata: {}, code: 410 } as KubeObject }], end: true });
  // meanwhile: b deleted and created again, c lost its owner, a deleted, e created
  res.lists.push({ pages: [page('20', [obj('b', 'b2', '15'), obj('c', 'c1', '16'), obj('e', 'e1', '17')])] });
  res.watches.push({ events: [{ type: 'DELETED', object: obj('e', 'e1', '21') }], end: false });

  const events: GraphEvent[] = [];
  const monitor = new ResourceMonitor(res as unknown as RESTResource, (ev) => events.push(ev), silentLogger);
  const stop = new AbortController();
  const running = monitor.run(stop.signal);
  await monitor.synced;
  const deadline = Date.now() + 10_000;
  while (!events.some((e) => e.type === 'delete' && e.object.uid === 'e1') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  stop.abort();
  await running;

  assert.deepEqual(events.map(summary), [
    'add a/a1',
    'add b/b1',
    'add c/c1 owners=d1',
    'update a/a1 owners=d1 old=a1',
    'delete b/b1',
    'add b/b2',
    'update c/c1 old=c1',
    'add e/e1',
    'delete a/a1 owners=d1',
    'delete e/e1',
  ]);
  assert.ok(events.every((e) => e.apiVersion === 'apps/v1' && e.kind === 'ReplicaSet'));
  assert.deepEqual(res.watchedFrom, ['10', '13', '20'], 'resumed from the bookmark; after the error, from the relist');
  assert.deepEqual(
    res.listOptions.map((o) => o.continue ?? ''),
    ['', 'more', ''],
  );
});
