// Kubernetes protobuf bodies written by hand (the k8s\0 envelope around runtime.Unknown), then
// broken the ways a wire decoder has to survive: lengths past the end, endless varints, wrong
// wire types, unknown fields, deep recursion through embedded messages.

import type { Prng } from './prng.js';

function varint(n: number | bigint): Buffer {
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}

function tag(field: number, wireType: number): Buffer {
  return varint((field << 3) | wireType);
}

function bytesField(field: number, value: Buffer | string): Buffer {
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([tag(field, 2), varint(b.length), b]);
}

function varintField(field: number, value: number): Buffer {
  return Buffer.concat([tag(field, 0), varint(value)]);
}

function mapEntry(field: number, key: string, value: Buffer | string): Buffer {
  return bytesField(field, Buffer.concat([bytesField(1, key), bytesField(2, value)]));
}

const MAGIC = Buffer.from('k8s\0');

export function envelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  const typeMeta = Buffer.concat([bytesField(1, apiVersion), bytesField(2, kind)]);
  return Buffer.concat([MAGIC, bytesField(1, typeMeta), bytesField(2, raw), bytesField(3, ''), bytesField(4, '')]);
}

function objectMeta(name: string, namespace: string | undefined, extra: Buffer = Buffer.alloc(0)): Buffer {
  return Buffer.concat([bytesField(1, name), ...(namespace ? [bytesField(3, namespace)] : []), mapEntry(11, 'app', 'fuzz'), extra]);
}

/** a valid ConfigMap or Secret (data, type) as protobuf, without the envelope */
export function protoObject(kind: 'ConfigMap' | 'Secret', name: string, namespace: string | undefined, metaExtra?: Buffer): Buffer {
  const meta = bytesField(1, objectMeta(name, namespace, metaExtra));
  return kind === 'ConfigMap'
    ? Buffer.concat([meta, mapEntry(2, 'k', 'v'), varintField(4, 0)])
    : Buffer.concat([meta, mapEntry(2, 'password', Buffer.from('pass')), bytesField(3, 'Opaque')]);
}

/** a hostile protobuf body for `kind`, and how it was made */
export function hostileProtobuf(
  kind: 'ConfigMap' | 'Secret',
  name: string,
  namespace: string | undefined,
  rng: Prng,
): { body: Buffer; how: string } {
  const good = protoObject(kind, name, namespace);
  switch (rng.int(0, 8)) {
    case 0: {
      // a length that runs past the end of the message
      const body = Buffer.concat([
        bytesField(1, objectMeta(name, namespace)),
        tag(2, 2),
        varint(rng.pick([1_000_000, 2 ** 31, 2 ** 32 + 5, 2 ** 62])),
        Buffer.from('xy'),
      ]);
      return { body: envelope('v1', kind, body), how: 'length-past-end' };
    }
    case 1: {
      // a varint of more than ten bytes
      const body = Buffer.concat([good, tag(rng.int(1, 20), 0), Buffer.alloc(rng.int(11, 64), 0xff), Buffer.from([1])]);
      return { body: envelope('v1', kind, body), how: 'endless-varint' };
    }
    case 2: {
      const body = Buffer.concat([good, tag(rng.int(1, 2000), rng.pick([0, 1, 2, 5])), rng.bytes(rng.int(0, 16))]);
      return { body: envelope('v1', kind, body), how: 'unknown-field' };
    }
    case 3: {
      // wire types 3 and 4 (groups) and 6, 7 (invalid)
      const body = Buffer.concat([good, tag(rng.int(1, 5), rng.pick([3, 4, 6, 7])), rng.bytes(4)]);
      return { body: envelope('v1', kind, body), how: 'bad-wire-type' };
    }
    case 4: {
      // recursion: ownerReferences or managedFields nested in themselves as embedded messages
      let inner = bytesField(1, 'x');
      const depth = rng.pick([100, 1000, 5000, rng.size(8000)]);
      for (let i = 0; i < depth; i++) inner = bytesField(rng.pick([13, 17, 1]), inner);
      return { body: envelope('v1', kind, Buffer.concat([bytesField(1, objectMeta(name, namespace, inner))])), how: 'deep-embedded' };
    }
    case 5: {
      const wrong = rng.pick([
        ['v1', 'Pod'],
        ['v2', kind],
        ['', ''],
        ['apps/v1', 'Deployment'],
        ['v1', 'Status'],
      ]);
      return { body: envelope(wrong[0]!, wrong[1]!, good), how: 'wrong-type-meta' };
    }
    case 6: {
      // the envelope itself broken: a missing or wrong magic, a truncated Unknown
      const whole = envelope('v1', kind, good);
      const how = rng.pick(['no-magic', 'bad-magic', 'truncated', 'raw-past-end']);
      if (how === 'no-magic') return { body: whole.subarray(4), how };
      if (how === 'bad-magic') return { body: Buffer.concat([Buffer.from('k8s\x01'), whole.subarray(4)]), how };
      if (how === 'truncated') return { body: whole.subarray(0, rng.int(4, whole.length - 1)), how };
      return { body: Buffer.concat([MAGIC, tag(2, 2), varint(2 ** 40), good]), how };
    }
    case 7: {
      const body = Buffer.concat([good, bytesField(2, Buffer.concat([bytesField(1, 'k'), bytesField(2, rng.bytes(rng.int(1, 8)))]))]);
      return { body: envelope('v1', kind, body), how: 'invalid-utf8-value' };
    }
    default: {
      const whole = Buffer.from(envelope('v1', kind, good));
      for (let n = rng.int(1, 5); n > 0; n--) whole[rng.int(4, whole.length - 1)] = rng.int(0, 255);
      return { body: whole, how: 'mutated' };
    }
  }
}
