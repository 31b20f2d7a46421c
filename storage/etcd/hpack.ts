// HPACK (RFC 7541) for the unary-call transport (h2-connection.ts).
//
// Encoding: only what a gRPC request needs. Fields are written as literals that are never
// added to the peer's dynamic table (so the encoder keeps no state and the peer's
// HEADER_TABLE_SIZE does not concern it), with static-table indexes where they save bytes,
// and without Huffman coding (allowed: the H bit is optional).
//
// Decoding: everything a server may send, since grpc-go indexes, Huffman-codes and evicts
// freely: indexed fields, the three kinds of literals, dynamic-table size updates.

import { HUFFMAN_CODES, HUFFMAN_LENGTHS } from './hpack-huffman-table.js';

/** RFC 7541 Appendix A; index 1 is STATIC_TABLE[0] */
const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];

/** the per-entry overhead RFC 7541 section 4.1 counts in a table's size */
const ENTRY_OVERHEAD = 32;

export class HpackError extends Error {
  constructor(message: string) {
    super(`HPACK: ${message}`);
    this.name = 'HpackError';
  }
}

// ---- encoding ----

/** an integer with an N-bit prefix, the first byte's other bits `firstByteFlags` (RFC 7541 5.1) */
export function integerBytes(value: number, prefixBits: number, firstByteFlags: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [firstByteFlags | value];
  const out = [firstByteFlags | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

function rawString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([Buffer.from(integerBytes(bytes.length, 7, 0)), bytes]);
}

/** one field as a literal without indexing, its name written out as a literal too (never
 *  by index), both strings plain */
export function encodeLiteralNewName(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), rawString(name), rawString(value)]);
}

/** one field as a literal that is never indexed; the name by static index when it has one */
export function encodeLiteral(name: string, value: string): Buffer {
  const nameIndex = STATIC_TABLE.findIndex(([n]) => n === name) + 1;
  const head = nameIndex > 0 ? Buffer.from(integerBytes(nameIndex, 4, 0x00)) : Buffer.concat([Buffer.from([0x00]), rawString(name)]);
  return Buffer.concat([head, rawString(value)]);
}

/** one field that the static table holds with this very value */
export function encodeStaticIndexed(name: string, value: string): Buffer {
  const index = STATIC_TABLE.findIndex(([n, v]) => n === name && v === value) + 1;
  if (index === 0) throw new Error(`${name}: ${value} is not in HPACK's static table`);
  return Buffer.from(integerBytes(index, 7, 0x80));
}

// ---- Huffman decoding ----

// The code as a binary tree in a flat array: node n's children are at [2n] (bit 0) and
// [2n+1] (bit 1); a child >= 0 is another node, a child < 0 is the symbol -child-1.
let huffmanTree: Int32Array | null = null;

function buildHuffmanTree(): Int32Array {
  const tree = new Int32Array(2 * 512).fill(0);
  let nodes = 1;
  for (let symbol = 0; symbol < HUFFMAN_CODES.length; symbol++) {
    const code = HUFFMAN_CODES[symbol]!;
    const length = HUFFMAN_LENGTHS[symbol]!;
    let node = 0;
    for (let bit = length - 1; bit > 0; bit--) {
      const slot = 2 * node + ((code >>> bit) & 1);
      if (tree[slot] === 0) tree[slot] = nodes++;
      node = tree[slot]!;
    }
    tree[2 * node + (code & 1)] = -symbol - 1;
  }
  return tree;
}

const EOS = 256;

function huffmanDecode(src: Buffer, start: number, end: number): string {
  const tree = (huffmanTree ??= buildHuffmanTree());
  const out: number[] = [];
  let node = 0;
  // bits read since the last complete symbol, and whether they were all ones
  let pendingBits = 0;
  let pendingAllOnes = true;
  for (let i = start; i < end; i++) {
    const byte = src[i]!;
    for (let bit = 7; bit >= 0; bit--) {
      const one = (byte >>> bit) & 1;
      const next = tree[2 * node + one]!;
      pendingBits++;
      if (one === 0) pendingAllOnes = false;
      if (next < 0) {
        const symbol = -next - 1;
        if (symbol === EOS) throw new HpackError('Huffman string contains EOS');
        out.push(symbol);
        node = 0;
        pendingBits = 0;
        pendingAllOnes = true;
      } else if (next === 0) {
        throw new HpackError('invalid Huffman code');
      } else {
        node = next;
      }
    }
  }
  // padding: at most 7 bits, the most significant bits of EOS (all ones)
  if (pendingBits > 7 || !pendingAllOnes) throw new HpackError('invalid Huffman padding');
  return Buffer.from(out).toString('latin1');
}

// ---- decoding ----

export class HpackDecoder {
  // newest entry first
  private readonly entries: [string, string][] = [];
  private size = 0;
  private maxSize: number;
  private pos = 0;

  /** `maxTableSize`: the SETTINGS_HEADER_TABLE_SIZE we announced (4096 unless changed) */
  constructor(private readonly maxTableSize = 4096) {
    this.maxSize = maxTableSize;
  }

  /** the header block's fields as [name, value, name, value, ...] */
  decode(block: Buffer): string[] {
    const fields: string[] = [];
    this.pos = 0;
    let fieldSeen = false;
    while (this.pos < block.length) {
      const first = block[this.pos]!;
      if (first & 0x80) {
        const [name, value] = this.entry(this.integer(block, 7));
        fields.push(name, value);
        fieldSeen = true;
      } else if (first & 0x40) {
        const [name, value] = this.literal(block, 6);
        fields.push(name, value);
        this.insert(name, value);
        fieldSeen = true;
      } else if (first & 0x20) {
        // a size update must come first in a block (RFC 7541 section 4.2)
        if (fieldSeen) throw new HpackError('dynamic table size update after a field');
        const size = this.integer(block, 5);
        if (size > this.maxTableSize) throw new HpackError(`table size ${size} over the limit ${this.maxTableSize}`);
        this.maxSize = size;
        this.evict(0);
      } else {
        // without indexing (0000) or never indexed (0001): both leave the table alone
        const [name, value] = this.literal(block, 4);
        fields.push(name, value);
        fieldSeen = true;
      }
    }
    return fields;
  }

  /** the dynamic table's entries, newest first (for tests) */
  get dynamicTable(): readonly (readonly [string, string])[] {
    return this.entries;
  }

  get dynamicTableSize(): number {
    return this.size;
  }

  private entry(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('index 0');
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!;
    const entry = this.entries[index - STATIC_TABLE.length - 1];
    if (!entry) throw new HpackError(`index ${index} is not in the table`);
    return entry;
  }

  private literal(block: Buffer, prefixBits: number): [string, string] {
    const nameIndex = this.integer(block, prefixBits);
    const name = nameIndex === 0 ? this.string(block) : this.entry(nameIndex)[0];
    return [name, this.string(block)];
  }

  private insert(name: string, value: string): void {
    const entrySize = name.length + value.length + ENTRY_OVERHEAD;
    if (entrySize > this.maxSize) {
      // an entry larger than the table empties it and is not added (section 4.4)
      this.entries.length = 0;
      this.size = 0;
      return;
    }
    this.evict(entrySize);
    this.entries.unshift([name, value]);
    this.size += entrySize;
  }

  /** drops the oldest entries until `room` more bytes fit */
  private evict(room: number): void {
    while (this.size + room > this.maxSize && this.entries.length > 0) {
      const [name, value] = this.entries.pop()!;
      this.size -= name.length + value.length + ENTRY_OVERHEAD;
    }
  }

  private integer(block: Buffer, prefixBits: number): number {
    if (this.pos >= block.length) throw new HpackError('truncated integer');
    const max = (1 << prefixBits) - 1;
    let value = block[this.pos++]! & max;
    if (value < max) return value;
    let factor = 1;
    for (;;) {
      if (this.pos >= block.length) throw new HpackError('truncated integer');
      const byte = block[this.pos++]!;
      value += (byte & 0x7f) * factor;
      if ((byte & 0x80) === 0) break;
      factor *= 128;
      if (factor > 2 ** 28) throw new HpackError('integer too large');
    }
    return value;
  }

  private string(block: Buffer): string {
    if (this.pos >= block.length) throw new HpackError('truncated string');
    const huffman = (block[this.pos]! & 0x80) !== 0;
    const length = this.integer(block, 7);
    const start = this.pos;
    const end = start + length;
    if (end > block.length) throw new HpackError('truncated string');
    this.pos = end;
    return huffman ? huffmanDecode(block, start, end) : block.toString('latin1', start, end);
  }
}
