// Encoding JSON values as kube's CBOR serializer writes objects: the self-described tag
// first, then deterministic CBOR (RFC 8949 §4.2: shortest heads, definite lengths, map keys
// sorted by their encoded bytes). Strings, keys included, are byte strings, as Go's encoder
// writes them under kube's options; integral numbers are integers, others the shortest float
// that keeps their value.

/** the self-described CBOR tag (55799) kube writes first */
export const SELF_DESCRIBED_TAG = Buffer.from([0xd9, 0xd9, 0xf7]);

class Writer {
  private buf = Buffer.allocUnsafe(1024);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  head(major: number, n: number): void {
    this.room(9);
    const m = major << 5;
    if (n < 24) {
      this.buf[this.length++] = m | n;
    } else if (n < 0x100) {
      this.buf[this.length++] = m | 24;
      this.buf[this.length++] = n;
    } else if (n < 0x10000) {
      this.buf[this.length++] = m | 25;
      this.buf.writeUInt16BE(n, this.length);
      this.length += 2;
    } else if (n < 0x100000000) {
      this.buf[this.length++] = m | 26;
      this.buf.writeUInt32BE(n, this.length);
      this.length += 4;
    } else {
      this.buf[this.length++] = m | 27;
      this.buf.writeBigUInt64BE(BigInt(n), this.length);
      this.length += 8;
    }
  }

  float(f: number): void {
    this.room(9);
    const half = numberToHalf(f);
    if (half !== undefined) {
      this.buf[this.length++] = 0xf9;
      this.buf.writeUInt16BE(half, this.length);
      this.length += 2;
    } else if (Math.fround(f) === f) {
      this.buf[this.length++] = 0xfa;
      this.buf.writeFloatBE(f, this.length);
      this.length += 4;
    } else {
      this.buf[this.length++] = 0xfb;
      this.buf.writeDoubleBE(f, this.length);
      this.length += 8;
    }
  }

  result(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** the half-precision bits of `f` when that form keeps its exact value */
function numberToHalf(f: number): number | undefined {
  if (f === 0) return Object.is(f, -0) ? 0x8000 : 0;
  const sign = f < 0 ? 0x8000 : 0;
  const a = Math.abs(f);
  const exp = Math.floor(Math.log2(a));
  if (exp >= -14 && exp <= 15) {
    const frac = a / 2 ** exp - 1;
    const bits = frac * 1024;
    if (Number.isInteger(bits) && 2 ** exp * (1 + bits / 1024) === a) return sign | ((exp + 15) << 10) | bits;
    return undefined;
  }
  if (exp < -14 && exp >= -24) {
    const bits = a / 2 ** -24;
    if (Number.isInteger(bits) && bits < 1024) return sign | bits;
  }
  return undefined;
}

function encodedKey(key: string): Buffer {
  const w = new Writer();
  const bytes = Buffer.from(key, 'utf8');
  w.head(2, bytes.length);
  w.bytes(bytes);
  return Buffer.from(w.result());
}

function write(w: Writer, value: unknown, sortKeys = true): void {
  if (value === null || value === undefined) {
    w.bytes(NULL);
  } else if (typeof value === 'boolean') {
    w.bytes(value ? TRUE : FALSE);
  } else if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    w.head(2, bytes.length);
    w.bytes(bytes);
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cbor: unsupported value: ${value}`);
    if (Number.isSafeInteger(value)) {
      if (value >= 0) w.head(0, value);
      else w.head(1, -1 - value);
    } else {
      w.float(value);
    }
  } else if (Array.isArray(value)) {
    w.head(4, value.length);
    for (const item of value) write(w, item, sortKeys);
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    const keyed = entries.map(([k, v]) => ({ key: encodedKey(k), value: v }));
    if (sortKeys) keyed.sort((a, b) => Buffer.compare(a.key, b.key));
    w.head(5, keyed.length);
    for (const e of keyed) {
      w.bytes(e.key);
      write(w, e.value, sortKeys);
    }
  } else {
    throw new Error(`cbor: unsupported type: ${typeof value}`);
  }
}

const NULL = Buffer.from([0xf6]);
const TRUE = Buffer.from([0xf5]);
const FALSE = Buffer.from([0xf4]);

/** `value` as one self-described, deterministic CBOR data item */
export function encodeCbor(value: unknown): Buffer {
  const w = new Writer();
  w.bytes(SELF_DESCRIBED_TAG);
  write(w, value);
  return w.result();
}

/** `value` as one self-described CBOR data item whose maps keep their members' order: what
 *  kapi stores, because objects are read back in the field order they were written in (kube
 *  re-orders by its Go types on decode; kapi has no types to do that with) */
export function encodeCborKeepingOrder(value: unknown): Buffer {
  const w = new Writer();
  w.bytes(SELF_DESCRIBED_TAG);
  write(w, value, false);
  return w.result();
}
