// The stored text and a write's answer from one encoding: byte for byte what encoding each of
// them on its own gives, wherever resourceVersion lands in the metadata.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAnswering, encodeObject, setResourceVersion, storedText } from './codec.js';
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

test('an object stored as CBOR reads back whatever JSON let it hold: more than 1024 members, nesting deeper than 64', () => {
  const annotations: Record<string, string> = {};
  for (let i = 0; i < 3000; i++) annotations[`k${i}`] = `v${i}`;
  let deep: unknown = 'leaf';
  for (let i = 0; i < 100; i++) deep = { x: [deep] };
  const obj: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'big', namespace: 'default', annotations },
    data: { list: JSON.stringify(Array.from({ length: 2000 }, (_, i) => i)) },
    deep,
  } as unknown as KubeObject;
  const stored = encodeObject(obj, 'cbor');
  assert.deepEqual(JSON.parse(storedText(stored)), obj);
});
