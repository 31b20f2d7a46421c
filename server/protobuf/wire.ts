// The protobuf wire format: tags, varints, length-delimited fields. Only what Kubernetes'
// proto2 messages use (varint, fixed32/64, length-delimited); groups are rejected.

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH = 2;
export const WIRE_FIXED32 = 5;

export class ProtobufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufError';
  }
}

const TWO_POW_32 = 2 ** 32;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

/** Appends fields to a growing buffer. */
export class Writer {
  private buf = Buffer.allocUnsafe(256);
  private len = 0;

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  tag(number: number, wireType: number): void {
    this.varint(number * 8 + wireType);
  }

  /** a non-negative integer below 2^53, or any value as a bigint (two's complement, 64 bits) */
  varint(value: number | bigint): void {
    if (typeof value === 'number' && value >= 0 && Number.isSafeInteger(value)) {
      this.reserve(10);
      let v = value;
      while (v >= 0x80) {
        this.buf[this.len++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      this.buf[this.len++] = v;
      return;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    this.reserve(10);
    while (v >= 0x80n) {
      this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.len++] = Number(v);
  }

  /** a signed integer: negative values take ten bytes, as in Go's proto encoding of int32/int64 */
  signed(value: number): void {
    if (value >= 0) this.varint(value);
    else this.varint(BigInt(Math.trunc(value)));
  }

  bytes(data: Uint8Array): void {
    this.varint(data.length);
    this.reserve(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
  }

  string(value: string): void {
    // most strings of an object are short and ASCII: copied here they skip two native calls
    const length = value.length;
    if (length < 0x80) {
      this.reserve(length + 1);
      const buf = this.buf;
      const start = this.len + 1;
      let i = 0;
      for (; i < length; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === length) {
        buf[this.len] = length;
        this.len = start + length;
        return;
      }
    }
    const n = Buffer.byteLength(value);
    this.varint(n);
    this.reserve(n);
    this.buf.write(value, this.len, 'utf8');
    this.len += n;
  }

  double(value: number): void {
    this.reserve(8);
    this.buf.writeDoubleLE(value, this.len);
    this.len += 8;
  }

  float(value: number): void {
    this.reserve(4);
    this.buf.writeFloatLE(value, this.len);
    this.len += 4;
  }

  /** raw bytes, no length */
  raw(data: Uint8Array): void {
    this.reserve(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
  }

  /** Starts a length-delimited field written in place (one byte is reserved for the length;
   *  endLength moves the content when the length needs more). Returns a mark for endLength. */
  beginLength(number: number): number {
    const mark = this.len;
    this.tag(number, WIRE_LENGTH);
    this.reserve(1);
    this.len += 1;
    return mark;
  }

  /** Ends the field begun at `mark`; with `dropEmpty`, an empty field is removed again.
   *  Returns the content's length. */
  endLength(mark: number, dropEmpty = false): number {
    // the tag is at mark; the reserved length byte is right before the content
    let start = mark;
    while (this.buf[start] >= 0x80) start++;
    start += 2;
    const length = this.len - start;
    if (length === 0 && dropEmpty) {
      this.len = mark;
      return 0;
    }
    const size = varintSize(length);
    if (size > 1) {
      this.reserve(size - 1);
      this.buf.copyWithin(start + size - 1, start, this.len);
      this.len += size - 1;
    }
    let pos = start - 1;
    let v = length;
    while (v >= 0x80) {
      this.buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[pos] = v;
    return length;
  }

  /** the bytes written; `standalone`: in a buffer of their own, never a view of a shared
   *  slab that a kept buffer would hold alive */
  finish(standalone = false): Buffer {
    if (!standalone) return Buffer.from(this.buf.subarray(0, this.len));
    const out = Buffer.allocUnsafeSlow(this.len);
    out.set(this.buf.subarray(0, this.len));
    return out;
  }
}

/** One field occurrence as read off the wire. */
export type WireValue =
  | { wireType: typeof WIRE_VARINT; value: bigint | number }
  | { wireType: typeof WIRE_FIXED64 | typeof WIRE_FIXED32 | typeof WIRE_LENGTH; value: Buffer };

/** Reads a varint at `pos`; small values as numbers, those of more than 49 bits as bigints. */
function readVarint(buf: Buffer, pos: number): [bigint | number, number] {
  let result = 0;
  let mul = 1;
  for (let i = 0; i < 7; i++) {
    if (pos >= buf.length) throw new ProtobufError('truncated varint');
    const b = buf[pos++];
    result += (b & 0x7f) * mul;
    if (b < 0x80) return [result, pos];
    mul *= 0x80;
  }
  let big = BigInt(result);
  let shift = 49n;
  for (let i = 7; i < 10; i++) {
    if (pos >= buf.length) throw new ProtobufError('truncated varint');
    const b = buf[pos++];
    big |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return [BigInt.asUintN(64, big), pos];
    shift += 7n;
  }
  throw new ProtobufError('varint longer than ten bytes');
}

/** Splits a message into its field occurrences, grouped by field number, in wire order. */
export function readFields(buf: Buffer): Map<number, WireValue[]> {
  const fields = new Map<number, WireValue[]>();
  let pos = 0;
  while (pos < buf.length) {
    const [key, afterKey] = readVarint(buf, pos);
    pos = afterKey;
    const k = Number(key);
    const number = Math.floor(k / 8);
    const wireType = k % 8;
    if (number < 1) throw new ProtobufError(`invalid field number ${number}`);
    let value: WireValue;
    switch (wireType) {
      case WIRE_VARINT: {
        const [v, next] = readVarint(buf, pos);
        pos = next;
        value = { wireType, value: v };
        break;
      }
      case WIRE_FIXED64:
      case WIRE_FIXED32: {
        const n = wireType === WIRE_FIXED64 ? 8 : 4;
        if (pos + n > buf.length) throw new ProtobufError('truncated fixed-width field');
        value = { wireType, value: buf.subarray(pos, pos + n) };
        pos += n;
        break;
      }
      case WIRE_LENGTH: {
        const [n, next] = readVarint(buf, pos);
        const length = Number(n);
        if (next + length > buf.length) throw new ProtobufError('truncated length-delimited field');
        value = { wireType, value: buf.subarray(next, next + length) };
        pos = next + length;
        break;
      }
      default:
        throw new ProtobufError(`unsupported wire type ${wireType} (field ${number})`);
    }
    const list = fields.get(number);
    if (list) list.push(value);
    else fields.set(number, [value]);
  }
  return fields;
}

/** The values of a packed repeated varint field. */
export function readPackedVarints(buf: Buffer): (bigint | number)[] {
  const out: (bigint | number)[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [v, next] = readVarint(buf, pos);
    out.push(v);
    pos = next;
  }
  return out;
}

/** A varint as the signed (two's complement) or unsigned integer of the given width. */
export function varintAs(value: bigint | number, type: 'int32' | 'int64' | 'uint32' | 'uint64' | 'bool'): number | boolean {
  if (type === 'bool') return value !== 0 && value !== 0n;
  if (typeof value === 'number') {
    if (type === 'int32') return value >= 2 ** 31 ? value - TWO_POW_32 : value;
    if (type === 'uint32') return value % TWO_POW_32;
    return value;
  }
  switch (type) {
    case 'int32':
      return Number(BigInt.asIntN(32, value));
    case 'uint32':
      return Number(BigInt.asUintN(32, value));
    case 'int64':
      return Number(BigInt.asIntN(64, value));
    case 'uint64':
      return Number(value);
  }
}
