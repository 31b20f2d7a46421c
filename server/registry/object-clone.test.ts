import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clone } from './object.js';

test('clone copies decoded JSON deeply, keeping key order, undefined members and "__proto__" keys', () => {
  const src = JSON.parse(
    '{"kind":"Pod","metadata":{"name":"a","labels":{"z":"1","a":"2"}},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]},"__proto__":{"x":1},"n":null,"t":true}',
  ) as Record<string, unknown>;
  src.gone = undefined;
  Object.freeze(src);
  const copy = clone(src);
  assert.deepEqual(copy, src);
  assert.deepEqual(Object.keys(copy), Object.keys(src));
  assert.deepEqual(Object.keys((copy.metadata as { labels: object }).labels), ['z', 'a']);
  assert.ok(Object.hasOwn(copy, '__proto__'));
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.ok('gone' in copy);
  assert.equal(Object.isFrozen(copy), false);
  const spec = copy.spec as { containers: { name: string }[] };
  spec.containers[0]!.name = 'changed';
  assert.equal((src.spec as { containers: { name: string }[] }).containers[0]!.name, 'c');
});

test('clone gives what structuredClone gives for values that are not plain JSON', () => {
  const when = new Date(0);
  const copy = clone({ when, bytes: Buffer.from('x'), list: [new Map([['k', 1]])], big: 1n });
  assert.ok(copy.when instanceof Date && copy.when !== when && copy.when.getTime() === 0);
  assert.deepEqual(copy, structuredClone({ when, bytes: Buffer.from('x'), list: [new Map([['k', 1]])], big: 1n }));
  assert.throws(
    () => clone({ f: () => 1 }),
    (err: Error) => err.name === 'DataCloneError',
  );
});
