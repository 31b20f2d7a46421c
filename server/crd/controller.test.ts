import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Storage, Watch, WatchEvent } from '../../storage/interface.js';
import type { ListObject, RESTResource, ResourceResolver } from '../registry/rest.js';
import { CustomResources } from './controller.js';

describe('CustomResources.start', () => {
  test('a stop that comes while the CRD watch opens ends that watch at once', async () => {
    const following = new AbortController();
    let watchStopped!: () => void;
    const stopped = new Promise<string>((resolve) => (watchStopped = () => resolve('watch stopped')));
    const crds = {
      list: async (): Promise<ListObject> => ({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '1' }, items: [] }),
      watch: async (): Promise<Watch> => {
        // the replica begins to stop while the watch is being opened
        following.abort();
        let end!: () => void;
        const ended = new Promise<void>((resolve) => (end = resolve));
        return {
          stop: () => {
            watchStopped();
            end();
          },
          // biome-ignore lint/correctness/useYield: a watch with no events that lasts until stopped
          async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
            await ended;
          },
        };
      },
    } as unknown as RESTResource;
    const builtins: ResourceResolver = {
      lookup: (group, _version, resource) =>
        group === 'apiextensions.k8s.io' && resource === 'customresourcedefinitions' ? crds : undefined,
      all: () => [crds],
    };
    const resources = new CustomResources({ builtins, storageFor: () => undefined as unknown as Storage });
    await resources.start(following.signal);
    const outcome = await Promise.race([
      stopped,
      new Promise<string>((resolve) => setTimeout(() => resolve('still watching'), 1_000).unref()),
    ]);
    assert.equal(outcome, 'watch stopped');
  });
});
