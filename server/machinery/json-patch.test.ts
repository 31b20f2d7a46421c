import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyJsonPatch, decodeJsonPatch, jsonEqual, JsonPatchError, type Json, type JsonPatchOperation } from './json-patch.js';

function apply(doc: Json, patch: unknown): Json {
  return applyJsonPatch(doc, decodeJsonPatch(patch));
}

// The examples of RFC 6902 appendix A, one per operation kind and error case.
const rfcVectors: { name: string; doc: Json; patch: unknown; expected?: Json; error?: boolean }[] = [
  {
    name: 'A.1 add an object member',
    doc: { foo: 'bar' },
    patch: [{ op: 'add', path: '/baz', value: 'qux' }],
    expected: { foo: 'bar', baz: 'qux' },
  },
  {
    name: 'A.2 add an array element',
    doc: { foo: ['bar', 'baz'] },
    patch: [{ op: 'add', path: '/foo/1', value: 'qux' }],
    expected: { foo: ['bar', 'qux', 'baz'] },
  },
  {
    name: 'A.3 remove an object member',
    doc: { baz: 'qux', foo: 'bar' },
    patch: [{ op: 'remove', path: '/baz' }],
    expected: { foo: 'bar' },
  },
  {
    name: 'A.4 remove an array element',
    doc: { foo: ['bar', 'qux', 'baz'] },
    patch: [{ op: 'remove', path: '/foo/1' }],
    expected: { foo: ['bar', 'baz'] },
  },
  {
    name: 'A.5 replace a value',
    doc: { baz: 'qux', foo: 'bar' },
    patch: [{ op: 'replace', path: '/baz', value: 'boo' }],
    expected: { baz: 'boo', foo: 'bar' },
  },
  {
    name: 'A.6 move a value',
    doc: { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
    patch: [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
    expected: { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
  },
  {
    name: 'A.7 move an array element',
    doc: { foo: ['all', 'grass', 'cows', 'eat'] },
    patch: [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
    expected: { foo: ['all', 'cows', 'eat', 'grass'] },
  },
  {
    name: 'A.8 test a value: success',
    doc: { baz: 'qux', foo: ['a', 2, 'c'] },
    patch: [
      { op: 'test', path: '/baz', value: 'qux' },
      { op: 'test', path: '/foo/1', value: 2 },
    ],
    expected: { baz: 'qux', foo: ['a', 2, 'c'] },
  },
  { name: 'A.9 test a value: error', doc: { baz: 'qux' }, patch: [{ op: 'test', path: '/baz', value: 'bar' }], error: true },
  {
    name: 'A.10 add a nested member object',
    doc: { foo: 'bar' },
    patch: [{ op: 'add', path: '/child', value: { grandchild: {} } }],
    expected: { foo: 'bar', child: { grandchild: {} } },
  },
  {
    name: 'A.11 ignore unrecognized elements',
    doc: { foo: 'bar' },
    patch: [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
    expected: { foo: 'bar', baz: 'qux' },
  },
  { name: 'A.12 add to a nonexistent target', doc: { foo: 'bar' }, patch: [{ op: 'add', path: '/baz/bat', value: 'qux' }], error: true },
  {
    name: 'A.14 ~ escape ordering',
    doc: { '/': 9, '~1': 10 },
    patch: [{ op: 'test', path: '/~01', value: 10 }],
    expected: { '/': 9, '~1': 10 },
  },
  {
    name: 'A.15 comparing strings and numbers',
    doc: { '/': 9, '~1': 10 },
    patch: [{ op: 'test', path: '/~01', value: '10' }],
    error: true,
  },
  {
    name: 'A.16 add an array value',
    doc: { foo: ['bar'] },
    patch: [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
    expected: { foo: ['bar', ['abc', 'def']] },
  },
];

test('RFC 6902 appendix A', () => {
  for (const v of rfcVectors) {
    if (v.error) {
      assert.throws(() => apply(v.doc, v.patch), JsonPatchError, v.name);
    } else {
      assert.deepEqual(apply(v.doc, v.patch), v.expected, v.name);
    }
  }
});

test('copy duplicates a value; later changes do not alias', () => {
  const out = apply({ a: { b: [1] } }, [
    { op: 'copy', from: '/a', path: '/c' },
    { op: 'add', path: '/c/b/-', value: 2 },
  ]);
  assert.deepEqual(out, { a: { b: [1] }, c: { b: [1, 2] } });
});

test('the input document is not modified', () => {
  const doc: Json = { a: [1, 2] };
  apply(doc, [{ op: 'remove', path: '/a/0' }]);
  assert.deepEqual(doc, { a: [1, 2] });
});

test('negative indices count from the end (kube-apiserver quirk)', () => {
  assert.deepEqual(apply({ a: [1, 2, 3] }, [{ op: 'remove', path: '/a/-1' }]), { a: [1, 2] });
  assert.deepEqual(apply({ a: [1, 2, 3] }, [{ op: 'replace', path: '/a/-3', value: 0 }]), { a: [0, 2, 3] });
  assert.deepEqual(apply({ a: [1, 2] }, [{ op: 'add', path: '/a/-1', value: 9 }]), { a: [1, 2, 9] });
  assert.throws(() => apply({ a: [1] }, [{ op: 'remove', path: '/a/-2' }]), JsonPatchError);
});

test('out-of-range and non-numeric array indices fail', () => {
  assert.throws(() => apply({ a: [1] }, [{ op: 'add', path: '/a/3', value: 0 }]), JsonPatchError);
  assert.throws(() => apply({ a: [1] }, [{ op: 'remove', path: '/a/1' }]), JsonPatchError);
  assert.throws(() => apply({ a: [1] }, [{ op: 'add', path: '/a/x', value: 0 }]), JsonPatchError);
  assert.deepEqual(apply({ a: [1] }, [{ op: 'add', path: '/a/1', value: 2 }]), { a: [1, 2] });
});

test('replace of a missing object member adds it (kube-apiserver quirk); of a missing parent fails', () => {
  assert.deepEqual(apply({ a: {} }, [{ op: 'replace', path: '/a/b', value: 1 }]), { a: { b: 1 } });
  assert.throws(() => apply({}, [{ op: 'replace', path: '/a/b', value: 1 }]), JsonPatchError);
});

test('remove of a missing member fails', () => {
  assert.throws(() => apply({ a: 1 }, [{ op: 'remove', path: '/b' }]), JsonPatchError);
});

test('test compares deeply; a missing member equals null', () => {
  const doc: Json = { a: { b: [1, { c: true }] } };
  assert.deepEqual(apply(doc, [{ op: 'test', path: '/a', value: { b: [1, { c: true }] } }]), doc);
  assert.throws(() => apply(doc, [{ op: 'test', path: '/a', value: { b: [1, { c: false }] } }]), JsonPatchError);
  assert.deepEqual(apply(doc, [{ op: 'test', path: '/x', value: null }]), doc);
  assert.deepEqual(apply(doc, [{ op: 'test', path: '', value: doc }]), doc);
});

test('replace of the whole document', () => {
  assert.deepEqual(apply({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }]), { b: 2 });
});

test('a failing operation leaves no partial result', () => {
  assert.throws(() =>
    apply({ a: 1 }, [
      { op: 'add', path: '/b', value: 2 },
      { op: 'test', path: '/a', value: 2 },
    ]),
  );
});

test('malformed patches', () => {
  assert.throws(() => decodeJsonPatch({ op: 'add' }), /cannot unmarshal object into Go value of type jsonpatch.Patch/);
  assert.throws(() => decodeJsonPatch(['add']), /cannot unmarshal string/);
  assert.throws(() => apply({}, [{ op: 'frobnicate', path: '/a' }]), /Unexpected kind: frobnicate/);
  assert.throws(() => apply({}, [{ op: 'add', value: 1 }]), /missing value/);
  assert.throws(() => apply({}, [{ path: '/a' }]), /Unexpected kind: unknown/);
});

test('pointer escapes ~0 and ~1', () => {
  assert.deepEqual(
    apply({ 'a/b': 1, 'c~d': 2 }, [
      { op: 'remove', path: '/a~1b' },
      { op: 'remove', path: '/c~0d' },
    ]),
    {},
  );
});

const annotationDoublings = (copies: number): JsonPatchOperation[] =>
  decodeJsonPatch([
    { op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(1000) } },
    ...Array.from({ length: copies }, (_, i) => ({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/a${i}` })),
  ]);

test('copies that double the document 30 times stop at the copy budget', () => {
  const doc = { kind: 'ConfigMap', metadata: { name: 'base' } };
  assert.throws(
    () => applyJsonPatch(doc, annotationDoublings(30)),
    (err: Error) => {
      assert.ok(err instanceof JsonPatchError);
      assert.match(err.message, /^Unable to complete the copy, the accumulated size increase of copy exceeds the limit 3145728$/);
      return true;
    },
  );
  assert.deepEqual(doc, { kind: 'ConfigMap', metadata: { name: 'base' } });
});

test('copies within the budget apply, and the budget counts compact JSON bytes', () => {
  const patched = applyJsonPatch({ metadata: {} }, annotationDoublings(3)) as { metadata: { annotations: Record<string, unknown> } };
  assert.equal(Object.keys(patched.metadata.annotations).length, 4);
  // {"a":"xxx..."} is 1008 bytes: the first copy fits a budget of 1008, not 1007
  assert.doesNotThrow(() => applyJsonPatch({ metadata: {} }, annotationDoublings(1), { maxCopyBytes: 1008, maxDepth: 100 }));
  assert.throws(() => applyJsonPatch({ metadata: {} }, annotationDoublings(1), { maxCopyBytes: 1007, maxDepth: 100 }), JsonPatchError);
  // Go escapes <, > and & in strings: each is six bytes there
  const ops = decodeJsonPatch([{ op: 'copy', from: '/s', path: '/t' }]);
  assert.doesNotThrow(() => applyJsonPatch({ s: '<' }, ops, { maxCopyBytes: 8, maxDepth: 10 }));
  assert.throws(() => applyJsonPatch({ s: '<' }, ops, { maxCopyBytes: 7, maxDepth: 10 }), JsonPatchError);
});

test('copies are deep: changing the copy leaves the source alone', () => {
  const patched = applyJsonPatch(
    { a: { b: [1, { c: 2 }] } },
    decodeJsonPatch([
      { op: 'copy', from: '/a', path: '/z' },
      { op: 'replace', path: '/z/b/1/c', value: 3 },
    ]),
  );
  assert.deepEqual(patched, { a: { b: [1, { c: 2 }] }, z: { b: [1, { c: 3 }] } });
});

test('a result nested past the depth limit is refused; deep values compare without recursion', () => {
  let deep: Json = 1;
  for (let i = 0; i < 50; i++) deep = [deep];
  const ops = decodeJsonPatch([
    { op: 'add', path: '/a', value: deep },
    { op: 'copy', from: '/a', path: '/a/0/0' },
  ]);
  // {} holds 50 levels, and the copy lands two levels into them
  assert.throws(() => applyJsonPatch({}, ops, { maxCopyBytes: 1 << 20, maxDepth: 52 }), /exceeded max depth of 52/);
  assert.doesNotThrow(() => applyJsonPatch({}, ops, { maxCopyBytes: 1 << 20, maxDepth: 200 }));
  let veryDeep: Json = 1;
  for (let i = 0; i < 100_000; i++) veryDeep = [veryDeep];
  assert.equal(jsonEqual(veryDeep, veryDeep), true);
});

test('a "__proto__" member is data, never the prototype', () => {
  const doc = JSON.parse('{"__proto__":{"x":1}}') as Json;
  const patched = applyJsonPatch(
    doc,
    decodeJsonPatch(JSON.parse('[{"op":"copy","from":"/__proto__","path":"/y"},{"op":"add","path":"/__proto__/z","value":2}]')),
  ) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(patched), Object.prototype);
  assert.equal(JSON.stringify(patched), '{"__proto__":{"x":1,"z":2},"y":{"x":1}}');
});
