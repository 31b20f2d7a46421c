import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Watch, WatchEvent } from '../../storage/interface.js';
import type { ResourceInfo } from '../apis/types.js';
import { silentLogger } from '../controllers/types.js';
import type { ListObject, RESTResource } from '../registry/rest.js';
import { phaseOnly, slimObject, startInformer } from './informer.js';

/** a resource that records each list and watch made of it; its watches last until stopped */
function recordingResource(calls: string[]): RESTResource {
  const info = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true } as ResourceInfo;
  return {
    info,
    list: async (): Promise<ListObject> => {
      calls.push('list');
      return { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [] };
    },
    watch: async (): Promise<Watch> => {
      calls.push('watch');
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      return {
        stop: () => stop(),
        // biome-ignore lint/correctness/useYield: a watch that ends without an event
        async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
          await stopped;
        },
      };
    },
  } as unknown as RESTResource;
}

describe('startInformer', () => {
  test('under a parent signal aborted already, it lists once (synced resolves for whoever waits) and then stops', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const calls: string[] = [];
    const informer = startInformer(recordingResource(calls), silentLogger, stopped.signal);
    await informer.synced;
    assert.equal(informer.hasSynced, true);
    // the loop's next step (a watch) would come within these turns
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls, ['list']);
    informer.stop();
  });

  test('under a live parent it lists, then watches, until the parent aborts', async () => {
    const parent = new AbortController();
    const calls: string[] = [];
    const informer = startInformer(recordingResource(calls), silentLogger, parent.signal);
    await informer.synced;
    while (!calls.includes('watch')) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls, ['list', 'watch']);
    parent.abort();
  });
});

describe('slim objects', () => {
  test('a pod phase is one shared frozen status; an unknown phase gets its own, none an empty one', () => {
    const running = phaseOnly({ phase: 'Running', conditions: [] });
    assert.equal(phaseOnly({ phase: 'Running' }), running);
    assert.deepEqual(running, { phase: 'Running' });
    assert.ok(Object.isFrozen(running));
    const odd = phaseOnly({ phase: 'Sleeping' });
    assert.deepEqual(odd, { phase: 'Sleeping' });
    assert.notEqual(phaseOnly({ phase: 'Sleeping' }), odd);
    assert.deepEqual(phaseOnly(undefined), {});
    assert.deepEqual(phaseOnly({ phase: 7 }), { phase: 7 });
  });

  test('keep metadata and what is asked, leaving out what is undefined', () => {
    const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '5', labels: { a: 'b' } }, spec: { x: 1 } };
    assert.deepEqual(slimObject(pod, { spec: undefined, status: { phase: 'Pending' } }), {
      metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '5' },
      status: { phase: 'Pending' },
    });
  });
});
