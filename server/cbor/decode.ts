// Decoding CBOR (RFC 8949) request bodies and stored objects to JSON values, with the rules
// of kube's CBOR serializer: one data item; the self-described tag 55799 skipped; text
// strings valid UTF-8, byte strings read as strings; map keys text or byte strings, never
// repeated; integers within int64; no NaN, no infinities, no bignums, no simple values but
// false, true and null; the time tags 0 and 1 become RFC 3339 strings, other tags their
// content; depth, array and map sizes bounded as kube bounds them. Messages are those of the
// Go decoder kube uses, so a client sees the same 400.

import { MAX_CBOR_ARRAY_ELEMENTS, MAX_CBOR_MAP_PAIRS, MAX_CBOR_NESTING_DEPTH, MAX_NESTING_DEPTH } from '../limits/decode-limits.js';

interface CborLimits {
  depth: number;
  elements: number;
  pairs: number;
}

/** kube's limits for CBOR a client sends */
const CLIENT_LIMITS: CborLimits = { depth: MAX_CBOR_NESTING_DEPTH, elements: MAX_CBOR_ARRAY_ELEMENTS, pairs: MAX_CBOR_MAP_PAIRS };
/** what kapi itself stored may be any object a JSON body made: JSON's depth, and as many
 *  elements as its bytes hold (each takes at least one) */
const STORED_LIMITS: CborLimits = { depth: MAX_NESTING_DEPTH, elements: Number.POSITIVE_INFINITY, pairs: Number.POSITIVE_INFINITY };

export class CborDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CborDecodeError';
  }
}

const TYPE_NAMES = ['positive integer', 'negative integer', 'byte string', 'UTF-8 text string', 'array', 'map', 'tag', 'primitives'];
const SELF_DESCRIBED = 55799;
const INT64_MAX = 2n ** 63n - 1n;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');
/** marks the end of an indefinite-length item while reading its members */
const BREAK = Symbol('break');

function notAccepted(type: string, what: string): CborDecodeError {
  return new CborDecodeError(`cbor: data item of cbor type ${type} is not accepted by protocol: ${what}`);
}

class Reader {
  pos = 0;
  constructor(
    private readonly buf: Uint8Array,
    private readonly limits: CborLimits,
  ) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new CborDecodeError('unexpected EOF');
  }

  private byte(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  /** the argument of a head: a count, a length or an integer value (bigint beyond 2^53) */
  private argument(major: number, info: number): number | bigint {
    if (info < 24) return info;
    const view = new DataView(this.buf.buffer, this.buf.byteOffset);
    switch (info) {
      case 24:
        return this.byte();
      case 25:
        this.need(2);
        this.pos += 2;
        return view.getUint16(this.pos - 2);
      case 26:
        this.need(4);
        this.pos += 4;
        return view.getUint32(this.pos - 4);
      case 27: {
        this.need(8);
        this.pos += 8;
        const v = view.getBigUint64(this.pos - 8);
        return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
      }
      default:
        throw new CborDecodeError(`cbor: invalid additional information ${info} for type ${TYPE_NAMES[major]}`);
    }
  }

  private length(major: number, info: number): number {
    const n = this.argument(major, info);
    // counts of arrays and maps are checked against kube's bounds before anything is read
    if (major === 4 || major === 5) return typeof n === 'bigint' ? Number.MAX_SAFE_INTEGER : n;
    if (typeof n === 'bigint' || n > this.buf.length - this.pos) throw new CborDecodeError('unexpected EOF');
    return n;
  }

  item(depth: number): unknown {
    const v = this.member(depth);
    if (v === BREAK) throw new CborDecodeError('cbor: unexpected "break" code');
    return v;
  }

  private member(depth: number): unknown {
    const head = this.byte();
    const major = head >> 5;
    const info = head & 0x1f;
    if (info === 31) return this.indefinite(major, depth);
    switch (major) {
      case 0: {
        const v = this.argument(major, info);
        if (typeof v === 'bigint' && v > INT64_MAX) {
          throw new CborDecodeError(`cbor: cannot unmarshal positive integer into Go value of type int64 (${v} overflows Go's int64)`);
        }
        return Number(v);
      }
      case 1: {
        const v = this.argument(major, info);
        const n = -1n - BigInt(v);
        if (n < -INT64_MAX - 1n)
          throw new CborDecodeError(`cbor: cannot unmarshal negative integer into Go value of type int64 (-1-${v} overflows Go's int64)`);
        return Number(n);
      }
      case 2:
        return lenientUtf8.decode(this.bytes(this.length(major, info)));
      case 3:
        return this.text(this.bytes(this.length(major, info)));
      case 4:
        return this.array(this.length(major, info), depth);
      case 5:
        return this.map(this.length(major, info), depth);
      case 6:
        return this.tagged(this.argument(major, info), depth);
      default:
        return this.simple(info);
    }
  }

  private bytes(n: number): Uint8Array {
    this.need(n);
    this.pos += n;
    return this.buf.subarray(this.pos - n, this.pos);
  }

  private text(bytes: Uint8Array): string {
    try {
      return utf8.decode(bytes);
    } catch {
      throw new CborDecodeError('cbor: invalid UTF-8 string');
    }
  }

  private enter(depth: number): number {
    if (depth + 1 > this.limits.depth) throw new CborDecodeError(`cbor: exceeded max nested level ${this.limits.depth}`);
    return depth + 1;
  }

  private array(n: number, depth: number): unknown[] {
    const inner = this.enter(depth);
    if (n > this.limits.elements) throw new CborDecodeError(`cbor: exceeded max number of elements ${this.limits.elements} for CBOR array`);
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(this.item(inner));
    return out;
  }

  private map(n: number, depth: number): Record<string, unknown> {
    const inner = this.enter(depth);
    if (n > this.limits.pairs) throw new CborDecodeError(`cbor: exceeded max number of key-value pairs ${this.limits.pairs} for CBOR map`);
    const out: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) this.pair(out, i, inner);
    return out;
  }

  private pair(out: Record<string, unknown>, index: number, depth: number): void {
    const key = this.key(depth);
    const value = this.item(depth);
    if (Object.hasOwn(out, key)) {
      throw new CborDecodeError(`cbor: found duplicate map key ${JSON.stringify(key)} at map element index ${index}`);
    }
    // defineProperty: a "__proto__" key is data like any other
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }

  private key(depth: number): string {
    const start = this.pos;
    const k = this.item(depth);
    if (typeof k === 'string') {
      const major = this.buf[start]! >> 5;
      // tagged keys are unwrapped to their content; only text and byte strings name fields
      if (major === 2 || major === 3 || major === 6) return k;
    }
    const major = this.buf[start]! >> 5;
    throw new CborDecodeError(`cbor: cannot unmarshal ${TYPE_NAMES[major]} into Go value of type string`);
  }

  private indefinite(major: number, depth: number): unknown {
    switch (major) {
      case 2:
      case 3: {
        const chunks: Uint8Array[] = [];
        for (;;) {
          const head = this.byte();
          if (head === 0xff) break;
          if (head >> 5 !== major || (head & 0x1f) === 31)
            throw new CborDecodeError(`cbor: wrong element type ${TYPE_NAMES[head >> 5]} for indefinite-length ${TYPE_NAMES[major]}`);
          chunks.push(this.bytes(this.length(major, head & 0x1f)));
        }
        const all = Buffer.concat(chunks);
        return major === 3 ? this.text(all) : lenientUtf8.decode(all);
      }
      case 4: {
        const inner = this.enter(depth);
        const out: unknown[] = [];
        for (;;) {
          const v = this.member(inner);
          if (v === BREAK) return out;
          if (out.length >= this.limits.elements)
            throw new CborDecodeError(`cbor: exceeded max number of elements ${this.limits.elements} for CBOR array`);
          out.push(v);
        }
      }
      case 5: {
        const inner = this.enter(depth);
        const out: Record<string, unknown> = {};
        for (let i = 0; ; i++) {
          if (this.pos < this.buf.length && this.buf[this.pos] === 0xff) {
            this.pos++;
            return out;
          }
          if (i >= this.limits.pairs)
            throw new CborDecodeError(`cbor: exceeded max number of key-value pairs ${this.limits.pairs} for CBOR map`);
          this.pair(out, i, inner);
        }
      }
      case 7:
        return BREAK;
      default:
        throw new CborDecodeError(`cbor: invalid indefinite length for type ${TYPE_NAMES[major]}`);
    }
  }

  private tagged(tag: number | bigint, depth: number): unknown {
    const start = this.pos;
    const content = this.item(depth);
    if (tag === SELF_DESCRIBED) return content;
    if (tag === 2 || tag === 3) throw notAccepted('tag', 'bignum');
    if (tag === 0) {
      if (typeof content !== 'string' || this.buf[start]! >> 5 !== 3 || Number.isNaN(Date.parse(content))) {
        throw new CborDecodeError('cbor: tag number 0 must be followed by text string, got ' + TYPE_NAMES[this.buf[start]! >> 5]);
      }
      return content;
    }
    if (tag === 1) {
      if (typeof content !== 'number')
        throw new CborDecodeError(
          'cbor: tag number 1 must be followed by integer or floating-point number, got ' + TYPE_NAMES[this.buf[start]! >> 5],
        );
      return rfc3339Nano(content);
    }
    return content;
  }

  private simple(info: number): unknown {
    switch (info) {
      case 20:
        return false;
      case 21:
        return true;
      case 22:
        return null;
      case 25:
      case 26:
      case 27: {
        const f = this.float(info);
        if (Number.isNaN(f)) throw notAccepted('primitives', 'floating-point NaN');
        if (!Number.isFinite(f)) throw notAccepted('primitives', 'floating-point infinity');
        return f;
      }
      case 24: {
        const v = this.byte();
        if (v < 32) throw new CborDecodeError(`cbor: invalid simple value ${v} for type primitives`);
        throw notAccepted('primitives', `simple value ${v}`);
      }
      case 28:
      case 29:
      case 30:
        throw new CborDecodeError(`cbor: invalid additional information ${info} for type primitives`);
      default:
        throw notAccepted('primitives', `simple value ${info}`);
    }
  }

  private float(info: number): number {
    const n = info === 25 ? 2 : info === 26 ? 4 : 8;
    const b = this.bytes(n);
    const view = new DataView(b.buffer, b.byteOffset, n);
    if (n === 4) return view.getFloat32(0);
    if (n === 8) return view.getFloat64(0);
    return halfToNumber(view.getUint16(0));
  }
}

function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** epoch seconds as Go's time.RFC3339Nano in UTC */
function rfc3339Nano(seconds: number): string {
  const ms = Math.floor(seconds * 1000);
  const iso = new Date(ms).toISOString();
  const nanos = Math.round((seconds - Math.floor(seconds)) * 1e9);
  const frac = nanos === 0 ? '' : '.' + String(nanos).padStart(9, '0').replace(/0+$/, '');
  return iso.slice(0, 19) + frac + 'Z';
}

/** Decodes exactly one CBOR data item a client sent, within kube's limits. Throws CborDecodeError. */
export function decodeCbor(bytes: Uint8Array): unknown {
  return decodeWithin(bytes, CLIENT_LIMITS);
}

/** Decodes an object kapi stored as CBOR: whatever a JSON write could store reads back. */
export function decodeStoredCbor(bytes: Uint8Array): unknown {
  return decodeWithin(bytes, STORED_LIMITS);
}

function decodeWithin(bytes: Uint8Array, limits: CborLimits): unknown {
  if (bytes.length === 0) throw new CborDecodeError('EOF');
  const reader = new Reader(bytes, limits);
  const value = reader.item(0);
  if (reader.pos < bytes.length) {
    throw new CborDecodeError(`cbor: ${bytes.length - reader.pos} bytes of extraneous data starting at index ${reader.pos}`);
  }
  return value;
}

/** the self-described CBOR tag kube's encoder writes first: how stored CBOR is recognized */
export function startsWithSelfDescribedTag(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xd9 && bytes[1] === 0xd9 && bytes[2] === 0xf7;
}
