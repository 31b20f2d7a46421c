// The protobuf wire format for the etcd messages every write and watch exchanges (see
// hot-codec.ts): a growing writer and a reader over one message's bytes.

export class WireWriter {
  private buf: Buffer;
  private len = 0;

  constructor(capacity = 256) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  get length(): number {
    return this.len;
  }

  /** a varint of a non-negative safe integer, or of a negative one as 64-bit two's complement */
  varint(value: number): void {
    this.reserve(10);
    if (value < 0) {
      let v = BigInt.asUintN(64, BigInt(Math.trunc(value)));
      while (v >= 0x80n) {
        this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
        v >>= 7n;
      }
      this.buf[this.len++] = Number(v);
      return;
    }
    let v = value;
    while (v >= 0x80) {
      this.buf[this.len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.len++] = v;
  }

  tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  bytes(data: Uint8Array): void {
    this.varint(data.length);
    this.reserve(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
  }

  /** starts a length-delimited field whose length is patched by end() (5 bytes reserved) */
  begin(field: number): number {
    this.tag(field, 2);
    this.reserve(5);
    const at = this.len;
    this.len += 5;
    return at;
  }

  /** ends the field begun at `at`, moving its content back over the unused length bytes */
  end(at: number): void {
    const contentStart = at + 5;
    const length = this.len - contentStart;
    let size = 1;
    for (let v = length; v >= 0x80; v = Math.floor(v / 0x80)) size++;
    let pos = at;
    let v = length;
    while (v >= 0x80) {
      this.buf[pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[pos++] = v;
    if (size < 5) {
      this.buf.copyWithin(at + size, contentStart, this.len);
      this.len -= 5 - size;
    }
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}

export class WireError extends Error {}

export class WireReader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** a varint as a number: an int64 (exact below 2^53: revisions, counts, lengths; a
   *  negative one takes ten bytes) */
  varint(): number {
    const start = this.pos;
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 9; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 0x80;
    }
    this.pos = start;
    const v = this.uint64();
    return typeof v === 'number' ? v : v.toSignedNumber();
  }

  /** a uint64 varint, exact: a number below 2^53, else a Long-like pair of 32-bit halves
   *  (cluster and member ids, random 64-bit numbers, are read on every response) */
  uint64(): number | Uint64 {
    let lo = 0;
    let hi = 0;
    let b = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      b = this.byte();
      lo |= (b & 0x7f) << shift;
      if (b < 0x80) return lo >>> 0;
    }
    b = this.byte();
    lo |= (b & 0x0f) << 28;
    hi = (b & 0x7f) >> 4;
    if (b >= 0x80) {
      for (let shift = 3; ; shift += 7) {
        if (shift > 31) throw new WireError('varint longer than ten bytes');
        b = this.byte();
        hi |= (b & 0x7f) << shift;
        if (b < 0x80) break;
      }
    }
    lo >>>= 0;
    hi >>>= 0;
    return hi < 0x200000 ? hi * 2 ** 32 + lo : new Uint64(lo, hi);
  }

  private byte(): number {
    if (this.pos >= this.end) throw new WireError('truncated varint');
    return this.buf[this.pos++]!;
  }

  /** a length-delimited field's bounds: [start, end) */
  span(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    const end = start + length;
    if (end > this.end) throw new WireError('truncated length-delimited field');
    this.pos = end;
    return [start, end];
  }

  /** a bytes field: a view of the message's buffer */
  bytes(): Buffer {
    const [start, end] = this.span();
    return this.buf.subarray(start, end);
  }

  string(): string {
    const [start, end] = this.span();
    return this.buf.toString('utf8', start, end);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.span();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new WireError(`wire type ${wireType} is not used by etcd`);
    }
    if (this.pos > this.end) throw new WireError('truncated fixed-size field');
  }
}

/** a uint64 past 2^53 as its two 32-bit halves, read like protobufjs's Long */
export class Uint64 {
  constructor(
    readonly lo: number,
    readonly hi: number,
  ) {}

  private big(): bigint {
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  /** nearest double (a uint64 past 2^53 has no exact one) */
  toNumber(): number {
    return this.hi * 2 ** 32 + this.lo;
  }

  /** the value read as an int64 */
  toSignedNumber(): number {
    return Number(BigInt.asIntN(64, this.big()));
  }

  toString(radix = 10): string {
    if (radix === 16) return this.hi.toString(16) + this.lo.toString(16).padStart(8, '0');
    return this.big().toString(radix);
  }
}
