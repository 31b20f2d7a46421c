// Storage keys read back: the namespace and name of the object a key names, for watchers that
// decide per changed key what they read.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyScheme } from './keys.js';

test('objectAt reads back what objectKey wrote, and nothing else', () => {
  const pods = new KeyScheme('/pods', true);
  assert.deepEqual(pods.objectAt(pods.objectKey('ns', 'p')), { namespace: 'ns', name: 'p' });
  for (const other of ['/pods/', '/pods/ns/', '/pods/ns', '/pods//p', '/pods/ns/p/x', '/podsx/ns/p', '/apps/pods/ns/p']) {
    assert.equal(pods.objectAt(other), undefined, other);
  }
  const nodes = new KeyScheme('/minions', false);
  assert.deepEqual(nodes.objectAt(nodes.objectKey('', 'n1')), { namespace: '', name: 'n1' });
  assert.equal(nodes.objectAt('/minions/'), undefined);
  assert.equal(nodes.objectAt('/minions/a/b'), undefined);
});
