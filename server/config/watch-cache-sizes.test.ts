import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WatchCacheSizeError, parseWatchCacheSizes, watchCacheEnabled } from './watch-cache-sizes.js';

test('--watch-cache-sizes: resource[.group]#size items; bad items are refused', () => {
  const sizes = parseWatchCacheSizes(['pods#0', 'deployments.apps#1000', 'Events#5']);
  assert.deepEqual(
    [...sizes],
    [
      ['pods', 0],
      ['deployments.apps', 1000],
      ['events', 5],
    ],
  );
  for (const bad of ['pods', 'pods#', '#5', 'pods#x', 'pods#1#2']) {
    assert.throws(
      () => parseWatchCacheSizes([bad]),
      (e) => e instanceof WatchCacheSizeError && e.message === `invalid value of watch cache size: ${bad}`,
    );
  }
  assert.throws(() => parseWatchCacheSizes(['pods#-1']), /cannot be negative/);
});

test('only zero means something: it turns the cache off for that resource, or by default', () => {
  const sizes = parseWatchCacheSizes(['pods#0', 'deployments.apps#7']);
  assert.equal(watchCacheEnabled(['pods'], sizes, 100), false);
  assert.equal(watchCacheEnabled(['configmaps'], sizes, 100), true);
  assert.equal(watchCacheEnabled(['configmaps'], sizes, 0), false);
  assert.equal(watchCacheEnabled(['deployments.apps'], sizes, 0), true);
  // events and events.events.k8s.io share one storage: a zero for either turns it off
  assert.equal(watchCacheEnabled(['events', 'events.events.k8s.io'], parseWatchCacheSizes(['events.events.k8s.io#0']), 100), false);
});
