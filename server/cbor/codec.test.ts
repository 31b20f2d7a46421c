import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CborDecodeError, decodeCbor, encodeCbor, startsWithSelfDescribedTag } from './index.js';

const hex = (s: string) => Buffer.from(s.replace(/\s/g, ''), 'hex');

test('encoding: self-described tag, byte strings, sorted keys, shortest numbers', () => {
  assert.deepEqual(encodeCbor({ b: 1, a: 'x' }), hex('d9d9f7 a2 4161 4178 4162 01'));
  assert.deepEqual(encodeCbor({ bb: 0, c: 0 }), hex('d9d9f7 a2 4163 00 426262 00'), 'shorter keys sort first');
  assert.deepEqual(encodeCbor([1.5, -1, 100000, 0.1, null, true]), hex('d9d9f7 86 f93e00 20 1a000186a0 fb3fb999999999999a f6 f5'));
  assert.deepEqual(encodeCbor(65504.5), hex('d9d9f7 fa477fe080'));
  assert.ok(startsWithSelfDescribedTag(encodeCbor({})));
});

test('round trip of an object', () => {
  const obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'é', labels: { a: 'b' } },
    data: { k: 'v' },
    n: [1, 2.25, -7, 2 ** 40],
  };
  assert.deepEqual(decodeCbor(encodeCbor(obj)), obj);
});

test('decoding accepts text strings, indefinite lengths and unknown tags', () => {
  assert.deepEqual(decodeCbor(hex('bf 6161 9f 01 02 ff ff')), { a: [1, 2] });
  assert.deepEqual(decodeCbor(hex('d9d9f7 a1 6161 d8 40 4178')), { a: 'x' });
  assert.equal(decodeCbor(hex('c1 1a 00000000')), '1970-01-01T00:00:00Z');
});

function rejects(h: string, message: string): void {
  assert.throws(
    () => decodeCbor(hex(h)),
    (err: unknown) => err instanceof CborDecodeError && err.message === message,
  );
}

test('decoding refuses what kube refuses, with its messages', () => {
  rejects('a2 6161 01 6161 02', 'cbor: found duplicate map key "a" at map element index 1');
  rejects('a2 6161 01 4161 02', 'cbor: found duplicate map key "a" at map element index 1');
  rejects('a1 01 02', 'cbor: cannot unmarshal positive integer into Go value of type string');
  rejects('f97e00', 'cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN');
  rejects('f97c00', 'cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity');
  rejects('f7', 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 23');
  rejects('c2 41 01', 'cbor: data item of cbor type tag is not accepted by protocol: bignum');
  rejects(
    '1bffffffffffffffff',
    "cbor: cannot unmarshal positive integer into Go value of type int64 (18446744073709551615 overflows Go's int64)",
  );
  rejects('62 ff fe', 'cbor: invalid UTF-8 string');
  rejects('a1 6161', 'unexpected EOF');
  rejects('01 02', 'cbor: 1 bytes of extraneous data starting at index 1');
  rejects('1c', 'cbor: invalid additional information 28 for type positive integer');
  rejects('9a 00100000', 'cbor: exceeded max number of elements 1024 for CBOR array');
  rejects('ba ffffffff', 'cbor: exceeded max number of key-value pairs 1024 for CBOR map');
  rejects('81'.repeat(65) + '01', 'cbor: exceeded max nested level 64');
  rejects('ff', 'cbor: unexpected "break" code');
  assert.throws(() => decodeCbor(Buffer.alloc(0)), { message: 'EOF' });
});

test('a __proto__ key is plain data', () => {
  const v = decodeCbor(hex('a1 49 5f5f70726f746f5f5f a0')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(v), ['__proto__']);
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
});
