// Just enough of kube's protobuf encoding to check a list answered in protobuf: the
// envelope (magic "k8s\0", runtime.Unknown with the raw object in field 2), then the List's
// ListMeta (field 1: continue is its field 3) and its items (field 2, repeated).

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

interface Field {
  number: number;
  /** the bytes of a length-delimited field */
  bytes?: Buffer;
}

function varint(buf: Buffer, at: number): [number, number] {
  let value = 0;
  let shift = 1;
  for (;;) {
    if (at >= buf.length) throw new Error('protobuf: truncated varint');
    const b = buf[at++]!;
    value += (b & 0x7f) * shift;
    if ((b & 0x80) === 0) return [value, at];
    shift *= 128;
  }
}

function* fields(buf: Buffer): Generator<Field> {
  let at = 0;
  while (at < buf.length) {
    const [tag, next] = varint(buf, at);
    at = next;
    const wire = tag & 7;
    const number = Math.floor(tag / 8);
    if (wire === 0) at = varint(buf, at)[1];
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const [len, start] = varint(buf, at);
      yield { number, bytes: buf.subarray(start, start + len) };
      at = start + len;
      continue;
    } else throw new Error(`protobuf: wire type ${wire} not expected in a list`);
    yield { number };
  }
}

/** the item count and continue token of a protobuf-encoded List */
export function protobufListSummary(body: Buffer): { items: number; continueToken: string } {
  if (!body.subarray(0, 4).equals(MAGIC)) throw new Error('not a kube protobuf body');
  let raw: Buffer | undefined;
  for (const f of fields(body.subarray(4))) if (f.number === 2) raw = f.bytes;
  if (!raw) throw new Error('protobuf envelope without an object');
  let items = 0;
  let continueToken = '';
  for (const f of fields(raw)) {
    if (f.number === 2) items++;
    else if (f.number === 1 && f.bytes) for (const m of fields(f.bytes)) if (m.number === 3 && m.bytes) continueToken = m.bytes.toString();
  }
  return { items, continueToken };
}
