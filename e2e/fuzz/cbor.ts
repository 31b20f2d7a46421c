// CBOR bodies (the CBORServingAndStorage gate): a valid document in kube's encoding, then broken
// the ways a CBOR decoder has to survive: nesting past any depth, lengths no message has,
// indefinite lengths that never end, keys that are not strings or come twice, tags, floats
// and simple values kube refuses, invalid UTF-8, truncation and random bytes.

import { encodeCbor, SELF_DESCRIBED_TAG as SELF_DESCRIBED } from '../../server/cbor/index.js';
import { mutateBytes, truncate, type Json } from './json-text.js';
import type { Prng } from './prng.js';

/** a CBOR head: major type and argument (RFC 8949 3), the argument as large as asked */
function head(major: number, argument: bigint | number): Buffer {
  const v = BigInt(argument);
  const m = major << 5;
  if (v < 24n) return Buffer.from([m | Number(v)]);
  if (v < 0x100n) return Buffer.from([m | 24, Number(v)]);
  if (v < 0x10000n) {
    const b = Buffer.from([m | 25, 0, 0]);
    b.writeUInt16BE(Number(v), 1);
    return b;
  }
  if (v < 0x100000000n) {
    const b = Buffer.from([m | 26, 0, 0, 0, 0]);
    b.writeUInt32BE(Number(v), 1);
    return b;
  }
  const b = Buffer.alloc(9);
  b[0] = m | 27;
  b.writeBigUInt64BE(v, 1);
  return b;
}

function text(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([head(3, b.length), b]);
}

/** a map of `entries` already encoded, keys and values alike */
function map(entries: Buffer[][]): Buffer {
  return Buffer.concat([head(5, entries.length), ...entries.flat()]);
}

/** `doc`'s members encoded one by one, so that a member can be replaced by hostile bytes */
function members(doc: { [key: string]: Json }): Buffer[][] {
  return Object.entries(doc).map(([k, v]) => [text(k), encodeCbor(v).subarray(SELF_DESCRIBED.length)]);
}

function hostileItem(rng: Prng): { item: Buffer; how: string } {
  switch (rng.int(0, 9)) {
    case 0: {
      const depth = rng.pick([65, 100, 10_000, rng.size(200_000)]);
      const opener = rng.pick([Buffer.from([0x81]), Buffer.from([0xa1, 0x61, 0x78]), Buffer.from([0x9f])]);
      return { item: Buffer.concat([Buffer.alloc(depth * opener.length).fill(opener), Buffer.from([0x01])]), how: 'deep' };
    }
    case 1:
      return {
        item: Buffer.concat([
          head(rng.pick([2, 3, 4, 5]), rng.pick([2n ** 64n - 1n, 2n ** 32n, 2n ** 31n, 1_000_000_000n])),
          Buffer.from('xy'),
        ]),
        how: 'huge-length',
      };
    case 2:
      return {
        item: Buffer.from(
          rng.pick([
            [0x9f, 0x01, 0x02],
            [0xbf, 0x61, 0x61],
            [0x5f, 0x41, 0x00],
            [0x7f, 0x61, 0x61],
            [0x9f, 0x9f, 0x9f],
          ]),
        ),
        how: 'indefinite-unended',
      };
    case 3:
      return {
        item: map(
          [
            [head(0, rng.int(0, 1000)), text('v')],
            [Buffer.from([0xf5]), text('v')],
            [Buffer.from([0x80]), text('v')],
          ].slice(0, rng.int(1, 3)),
        ),
        how: 'non-string-key',
      };
    case 4: {
      const tagNumber = rng.pick([0n, 1n, 2n, 3n, 4n, 5n, 21n, 24n, 32n, 55799n, 0xffffn, 2n ** 63n]);
      const tagged = rng.bool() ? Buffer.from([0x41, 0xff]) : text('x');
      return { item: Buffer.concat([head(6, tagNumber), tagged]), how: 'tag' };
    }
    case 5:
      return {
        item: Buffer.from(
          rng.pick([
            [0xf9, 0x7e, 0x00],
            [0xf9, 0x7c, 0x00],
            [0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0],
            [0xf7],
            [0xf8, 0x20],
            [0xff],
            [0xf9, 0x00, 0x01],
            [0xfc],
            [0x1c],
          ]),
        ),
        how: 'float-simple-reserved',
      };
    case 6:
      return { item: Buffer.concat([head(3, 3), Buffer.from([0xc3, 0x28, 0xff])]), how: 'invalid-utf8' };
    case 7:
      return {
        item: Buffer.from(
          rng.pick([
            [0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            [0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            [0x3b, 0x80, 0, 0, 0, 0, 0, 0, 0],
          ]),
        ),
        how: 'int64-range',
      };
    case 8: {
      const n = rng.pick([1025, 5000, rng.size(100_000)]);
      return { item: Buffer.concat([head(4, n), Buffer.alloc(n, 0x00)]), how: 'many-elements' };
    }
    default:
      return { item: rng.bytes(rng.size(256)), how: 'random-bytes' };
  }
}

/** `doc` as a CBOR body, most often broken; `how` names the break */
export function hostileCbor(doc: { [key: string]: Json }, rng: Prng): { body: Buffer; how: string } {
  const valid = Buffer.concat([SELF_DESCRIBED, map(members(doc))]);
  switch (rng.int(0, 9)) {
    case 0:
      return { body: valid, how: 'valid' };
    case 1:
      return { body: valid.subarray(SELF_DESCRIBED.length), how: 'no-self-described-tag' };
    case 2: {
      // kind (or another member) twice
      const entries = members(doc);
      const again = entries[rng.int(0, entries.length - 1)]!;
      return { body: Buffer.concat([SELF_DESCRIBED, map([...entries, again])]), how: 'duplicate-key' };
    }
    case 3:
      return { body: truncate(valid, rng), how: 'truncated' };
    case 4:
      return { body: mutateBytes(valid, rng), how: 'mutated' };
    case 5:
      return { body: Buffer.concat([valid, rng.bytes(rng.int(1, 16))]), how: 'trailing' };
    default: {
      // one member's value (or a new member) replaced by a hostile item
      const entries = members(doc);
      const { item, how } = hostileItem(rng);
      const key = rng.pick(['data', 'metadata', 'x-unknown', 'spec', 'kind']);
      const kept = entries.filter(([k]) => !k!.equals(text(key)));
      return { body: Buffer.concat([SELF_DESCRIBED, map([...kept, [text(key), item]])]), how };
    }
  }
}
