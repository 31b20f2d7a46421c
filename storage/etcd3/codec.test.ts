// The stored text and a write's answer from one encoding: byte for byte what encoding each of
// them on its own gives, wherever resourceVersion lands in the metadata.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAnswering, encodeObject, setResourceVersion } from './codec.js';
import type { KubeObject } from '../interface.js';

const objects: KubeObject[] = [
  { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns', uid: 'u', creationTimestamp: 't' }, data: { k: 'v' } },
  { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', uid: 'u' }, data: {} },
  { kind: 'X', apiVersion: 'v1', metadata: {} },
  { kind: 'X', apiVersion: 'v1', metadata: { labels: { resourceVersion: 'x' }, name: 'first-after' } },
  { kind: 'X', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '41', generation: 2 }, spec: { resourceVersion: '"' } },
  { metadata: { name: 'a', generation: undefined, annotations: { a: '<&>\u2028' } }, kind: 'Late', spec: { s: 'é😀' } },
  { kind: 'X', apiVersion: 'v1', metadata: { name: 'a', unknownMember: 1, managedFields: [{ manager: 'm' }] } },
  { kind: 'Ünïcode', apiVersion: 'v1', metadata: { name: 'é😀', namespace: 'ns', uid: 'u', labels: { a: 'ü' } } },
];

test('encodeAnswering stores what encodeObject stores and answers what encoding the answer gives', () => {
  for (const obj of objects) {
    const encoded = encodeAnswering(obj);
    assert.ok(encoded, JSON.stringify(obj));
    assert.equal(encoded.plain.toString(), encodeObject(obj).toString(), JSON.stringify(obj));
    for (const revision of [1, 42, 9007199254740991]) {
      assert.equal(encoded.answer(revision), JSON.stringify(setResourceVersion(obj, revision)));
    }
  }
});

test('encodeAnswering leaves an object without metadata to encodeObject', () => {
  assert.equal(encodeAnswering({ kind: 'X' } as KubeObject), undefined);
});
