// The Kubernetes protobuf media type (application/vnd.kubernetes.protobuf) for built-in kinds:
// converts between the JSON objects the rest of kapi works with and the bytes client-go sends
// and expects.
//
// Wire forms (k8s.io/apimachinery runtime/serializer/protobuf):
//  - an object: the magic `k8s\0`, then runtime.Unknown{typeMeta{apiVersion, kind}, raw} where
//    raw is the object's own message (which has no kind/apiVersion fields);
//  - a watch stream: frames of a 4-byte big-endian length and a metav1.WatchEvent message
//    WITHOUT magic or Unknown wrapper, whose object.raw is the object in the enveloped form.
//
// JSON <-> proto rules follow Go's encoders: Quantity is a message holding its string;
// IntOrString is {type, intVal, strVal}; Time is {seconds} (JSON in whole UTC seconds) and
// MicroTime {seconds, nanos} (JSON with microseconds); Duration holds nanoseconds (JSON is Go's
// duration text); RawExtension and FieldsV1 hold JSON bytes; []byte is bytes on the wire and
// base64 in JSON; maps are repeated {key, value} entries; Go named slices (Verbs, ExtraValue)
// are messages with `items`. Decoding yields what Go's JSON encoder would print for the decoded
// struct: Go's protobuf encoder writes every non-pointer scalar, so zero values are dropped
// unless the Go field is a pointer or lacks `omitempty`; empty repeated fields and maps are
// absent; zero times are absent (Go prints null).

import type { GroupVersionKind } from '../apis/types.js';
import { jsonTooDeep, MAX_NESTING_DEPTH } from '../limits/decode-limits.js';
import { loadProtoCatalog, type FieldDescriptor, type MessageDescriptor, type ProtoCatalog } from './descriptor.js';
import { formatDuration, formatMicroTime, formatTime, parseDuration, parseTimestamp } from './times.js';
import {
  ProtobufError,
  readFields,
  readPackedVarints,
  varintAs,
  WIRE_FIXED32,
  WIRE_FIXED64,
  WIRE_LENGTH,
  WIRE_VARINT,
  Writer,
  type WireValue,
} from './wire.js';

export { ProtobufError } from './wire.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
/** the `k8s\0` prefix of every enveloped object */
export const PROTOBUF_MAGIC: Buffer = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export type JsonObject = Record<string, unknown>;

export interface DecodedObject {
  apiVersion: string;
  kind: string;
  /** the JSON object, `kind` and `apiVersion` first */
  object: JsonObject;
}

export interface DecodedWatchEvent extends DecodedObject {
  type: string;
}

const QUANTITY = 'apimachinery.pkg.api.resource.Quantity';
const QUANTITY_VALUE = 'apimachinery.pkg.api.resource.QuantityValue';
const INT_OR_STRING = 'apimachinery.pkg.util.intstr.IntOrString';
const TIME = 'apimachinery.pkg.apis.meta.v1.Time';
const MICRO_TIME = 'apimachinery.pkg.apis.meta.v1.MicroTime';
const DURATION = 'apimachinery.pkg.apis.meta.v1.Duration';
const FIELDS_V1 = 'apimachinery.pkg.apis.meta.v1.FieldsV1';
const RAW_EXTENSION = 'apimachinery.pkg.runtime.RawExtension';

const SCALARS = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'double', 'float']);
const VARINT_SCALARS = new Set(['bool', 'int32', 'int64', 'uint32', 'uint64']);

function catalog(): ProtoCatalog {
  return loadProtoCatalog();
}

function messageNamed(name: string): MessageDescriptor {
  const desc = catalog().message(name);
  if (!desc) throw new ProtobufError(`no protobuf message ${name}`);
  return desc;
}

function apiVersionOf(gvk: GroupVersionKind): string {
  return gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`;
}

function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Whether a kind has a protobuf form (built-in kinds and the meta kinds; not custom resources
 *  or Table). */
export function hasProtobufMessage(gvk: GroupVersionKind): boolean {
  return catalog().messageForKind(gvk) !== undefined;
}

function messageForKind(gvk: GroupVersionKind): MessageDescriptor {
  const desc = catalog().messageForKind(gvk);
  if (!desc) throw new ProtobufError(`${gvk.kind} in ${apiVersionOf(gvk)} has no protobuf serialization`);
  return desc;
}

// ================================================================ JSON -> proto

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  return Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
}

function asString(v: unknown, desc: MessageDescriptor, field: FieldDescriptor): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new ProtobufError(`${desc.name}.${field.jsonName}: expected a string, got ${describe(v)}`);
}

function asInteger(v: unknown, desc: MessageDescriptor, field: FieldDescriptor): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n)) throw new ProtobufError(`${desc.name}.${field.jsonName}: expected an integer, got ${describe(v)}`);
  return Math.trunc(n);
}

function writeFields(w: Writer, desc: MessageDescriptor, obj: JsonObject): void {
  for (const field of desc.fields) {
    if (field.inline) {
      // the embedded struct's fields live in this very JSON object
      const mark = w.beginLength(field.number);
      writeFields(w, messageNamed(field.type), obj);
      w.endLength(mark, true);
      continue;
    }
    const value = obj[field.jsonName];
    if (value === undefined || value === null) continue;
    if (field.map) {
      if (!isObject(value)) throw new ProtobufError(`${desc.name}.${field.jsonName}: expected an object, got ${describe(value)}`);
      // sorted, like Go's deterministic map encoding
      for (const key of Object.keys(value).sort()) {
        const mark = w.beginLength(field.number);
        writeValue(w, 1, field.map.key, key, desc, field);
        const v = value[key];
        if (v !== undefined && v !== null) writeValue(w, 2, field.map.value, v, desc, field);
        w.endLength(mark);
      }
    } else if (field.repeated) {
      if (!Array.isArray(value)) throw new ProtobufError(`${desc.name}.${field.jsonName}: expected an array, got ${describe(value)}`);
      for (const element of value) writeValue(w, field.number, field.type, element, desc, field);
    } else {
      writeValue(w, field.number, field.type, value, desc, field);
    }
  }
}

/** a null list element is the zero value; `desc`/`field` name the place in errors */
function writeValue(w: Writer, number: number, type: string, value: unknown, desc: MessageDescriptor, field: FieldDescriptor): void {
  switch (type) {
    case 'string':
      w.tag(number, WIRE_LENGTH);
      w.string(value === null ? '' : asString(value, desc, field));
      return;
    case 'bytes':
      w.tag(number, WIRE_LENGTH);
      w.bytes(value === null ? Buffer.alloc(0) : Buffer.from(asString(value, desc, field), 'base64'));
      return;
    case 'bool':
      w.tag(number, WIRE_VARINT);
      w.varint(value === true || value === 'true' ? 1 : 0);
      return;
    case 'int32':
    case 'int64':
      w.tag(number, WIRE_VARINT);
      w.signed(value === null ? 0 : asInteger(value, desc, field));
      return;
    case 'uint32':
    case 'uint64':
      w.tag(number, WIRE_VARINT);
      w.varint(value === null ? 0 : BigInt(asInteger(value, desc, field)));
      return;
    case 'double':
      w.tag(number, WIRE_FIXED64);
      w.double(value === null ? 0 : Number(value));
      return;
    case 'float':
      w.tag(number, WIRE_FIXED32);
      w.float(value === null ? 0 : Number(value));
      return;
    default: {
      const mark = w.beginLength(number);
      if (value !== null) writeMessageContent(w, type, value, desc, field);
      w.endLength(mark);
    }
  }
}

function writeMessageContent(w: Writer, type: string, value: unknown, desc: MessageDescriptor, field: FieldDescriptor): void {
  switch (type) {
    case QUANTITY:
    case QUANTITY_VALUE:
      w.tag(1, WIRE_LENGTH);
      w.string(asString(value, desc, field));
      return;
    case INT_OR_STRING:
      if (typeof value === 'number') {
        w.tag(1, WIRE_VARINT);
        w.varint(0);
        w.tag(2, WIRE_VARINT);
        w.signed(Math.trunc(value));
      } else {
        w.tag(1, WIRE_VARINT);
        w.varint(1);
        w.tag(3, WIRE_LENGTH);
        w.string(asString(value, desc, field));
      }
      return;
    case TIME: {
      // Go writes whole seconds only (its JSON has no more)
      const { seconds } = parseTimestamp(asString(value, desc, field));
      w.tag(1, WIRE_VARINT);
      w.signed(seconds);
      return;
    }
    case MICRO_TIME: {
      const { seconds, nanos } = parseTimestamp(asString(value, desc, field));
      w.tag(1, WIRE_VARINT);
      w.signed(seconds);
      const micros = nanos - (nanos % 1000);
      if (micros !== 0) {
        w.tag(2, WIRE_VARINT);
        w.varint(micros);
      }
      return;
    }
    case DURATION:
      w.tag(1, WIRE_VARINT);
      w.varint(parseDuration(asString(value, desc, field)));
      return;
    case RAW_EXTENSION:
    case FIELDS_V1:
      w.tag(1, WIRE_LENGTH);
      w.string(JSON.stringify(value));
      return;
    default: {
      const message = messageNamed(type);
      if (message.sliceWrapper) {
        if (!Array.isArray(value)) throw new ProtobufError(`${desc.name}.${field.jsonName}: expected an array, got ${describe(value)}`);
        const items = message.fields[0];
        for (const element of value) writeValue(w, items.number, items.type, element, message, items);
        return;
      }
      if (!isObject(value)) throw new ProtobufError(`${desc.name}.${field.jsonName}: expected an object, got ${describe(value)}`);
      writeFields(w, message, value);
    }
  }
}

/** magic + Unknown's typeMeta, written into `w`: what every enveloped form starts with */
function writeEnvelopeHead(w: Writer, gvk: GroupVersionKind): void {
  w.raw(PROTOBUF_MAGIC);
  const typeMeta = w.beginLength(1);
  w.tag(1, WIRE_LENGTH);
  w.string(apiVersionOf(gvk));
  w.tag(2, WIRE_LENGTH);
  w.string(gvk.kind);
  w.endLength(typeMeta);
}

/** magic + Unknown{typeMeta, raw}, written into `w` */
function writeEnvelope(w: Writer, obj: JsonObject, gvk: GroupVersionKind, desc: MessageDescriptor): void {
  writeEnvelopeHead(w, gvk);
  const raw = w.beginLength(2);
  writeFields(w, desc, obj);
  w.endLength(raw);
}

/** The enveloped protobuf form of an object of a built-in kind (throws ProtobufError for kinds
 *  without one). `kind`/`apiVersion` are taken from `gvk`, not from the object. */
export function encodeObject(obj: JsonObject, gvk: GroupVersionKind): Buffer {
  const desc = messageForKind(gvk);
  const w = new Writer();
  writeEnvelope(w, obj, gvk, desc);
  return w.finish();
}

/** the items field of a list message, when the message is exactly every Kubernetes list's
 *  {ListMeta metadata = 1; repeated Item items = 2}: an item's bytes then do not depend on
 *  the list around it */
function itemsFieldOf(desc: MessageDescriptor): FieldDescriptor | undefined {
  if (desc.fields.length !== 2) return undefined;
  const [meta, items] = desc.fields;
  if (meta.number !== 1 || meta.jsonName !== 'metadata' || meta.repeated || meta.inline) return undefined;
  if (items.number !== 2 || items.jsonName !== 'items' || !items.repeated || items.map || SCALARS.has(items.type)) return undefined;
  return items;
}

/** Whether lists of this kind can be written in pieces (encodeListHead, encodeListItem). */
export function hasListPieces(listGvk: GroupVersionKind): boolean {
  const desc = catalog().messageForKind(listGvk);
  return desc !== undefined && itemsFieldOf(desc) !== undefined;
}

function listItemsField(listGvk: GroupVersionKind): { desc: MessageDescriptor; items: FieldDescriptor } {
  const desc = messageForKind(listGvk);
  const items = itemsFieldOf(desc);
  if (!items) throw new ProtobufError(`${listGvk.kind} cannot be written in pieces`);
  return { desc, items };
}

/**
 * One item of a list of kind `listGvk` exactly as encodeList writes it inside the list: the
 * items field's tag and length, then the item's message. The same bytes are also the `raw`
 * field of the item's own envelope (field 2 of runtime.Unknown). The buffer is the item's
 * own (no pooled slab behind it), so it can be kept.
 */
export function encodeListItem(item: JsonObject, listGvk: GroupVersionKind): Buffer {
  const { desc, items } = listItemsField(listGvk);
  const w = new Writer();
  writeValue(w, items.number, items.type, item, desc, items);
  return w.finish(true);
}

/**
 * Whether an object of kind `gvk` enveloped alone is encodeObjectHead followed by its
 * encodeListItem bytes in a list of kind `listGvk`: the list's items are of the object's
 * message, which has no field of its own for the kind or apiVersion a list item lacks.
 */
export function sharesListItemBytes(gvk: GroupVersionKind, listGvk: GroupVersionKind): boolean {
  const desc = catalog().messageForKind(gvk);
  const list = catalog().messageForKind(listGvk);
  const items = list && itemsFieldOf(list);
  if (!desc || !items || catalog().message(items.type) !== desc) return false;
  return !desc.fields.some((f) => f.inline || f.jsonName === 'kind' || f.jsonName === 'apiVersion');
}

/** the start of an object's enveloped form: the magic and the envelope's typeMeta */
export function encodeObjectHead(gvk: GroupVersionKind): Buffer {
  const w = new Writer();
  writeEnvelopeHead(w, gvk);
  return w.finish();
}

/**
 * The start of a list's enveloped form up to its first item: encodeList's bytes are this
 * head followed by encodeListItem of each item. `list` gives the list's metadata (its items
 * are not read); `itemsBytes` is the sum of the items' lengths.
 */
export function encodeListHead(list: JsonObject, listGvk: GroupVersionKind, itemsBytes: number): Buffer {
  const { desc } = listItemsField(listGvk);
  const meta = new Writer();
  const metaField = desc.fields[0];
  const metadata = list[metaField.jsonName];
  if (metadata !== undefined && metadata !== null) writeValue(meta, metaField.number, metaField.type, metadata, desc, metaField);
  const metaBytes = meta.finish();
  const w = new Writer();
  writeEnvelopeHead(w, listGvk);
  w.tag(2, WIRE_LENGTH);
  w.varint(metaBytes.length + itemsBytes);
  w.raw(metaBytes);
  return w.finish();
}

/** The enveloped form of a list; `gvk` names the list kind (e.g. PodList). */
export function encodeList(list: JsonObject, gvk: GroupVersionKind): Buffer {
  if (!gvk.kind.endsWith('List')) throw new ProtobufError(`${gvk.kind} is not a list kind`);
  return encodeObject(list, gvk);
}

/** One frame of a protobuf watch stream: the 4-byte big-endian length, then a metav1.WatchEvent
 *  whose object.raw is the enveloped object. `gvk` is the object's kind (Status for ERROR). */
export function encodeWatchEvent(type: string, obj: JsonObject, gvk: GroupVersionKind): Buffer {
  const desc = messageForKind(gvk);
  const w = new Writer();
  w.raw(Buffer.alloc(4));
  w.tag(1, WIRE_LENGTH);
  w.string(type);
  const rawExtension = w.beginLength(2);
  const raw = w.beginLength(1);
  writeEnvelope(w, obj, gvk, desc);
  w.endLength(raw);
  w.endLength(rawExtension);
  const frame = w.finish();
  frame.writeUInt32BE(frame.length - 4, 0);
  return frame;
}

// ================================================================ proto -> JSON

function lastLength(values: readonly WireValue[] | undefined): Buffer | undefined {
  const last = values?.[values.length - 1];
  if (!last) return undefined;
  if (last.wireType !== WIRE_LENGTH) throw new ProtobufError(`expected a length-delimited field, got wire type ${last.wireType}`);
  return last.value;
}

function lastVarint(values: readonly WireValue[] | undefined): bigint | number | undefined {
  const last = values?.[values.length - 1];
  if (!last) return undefined;
  if (last.wireType !== WIRE_VARINT) throw new ProtobufError(`expected a varint field, got wire type ${last.wireType}`);
  return last.value;
}

/** occurrences of a message field merge: concatenated encodings decode as the merged message */
function mergedBytes(values: readonly WireValue[]): Buffer {
  const parts: Buffer[] = [];
  for (const v of values) {
    if (v.wireType !== WIRE_LENGTH) throw new ProtobufError(`expected an embedded message, got wire type ${v.wireType}`);
    parts.push(v.value);
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

function decodeScalar(type: string, v: WireValue): unknown {
  switch (type) {
    case 'string':
      if (v.wireType !== WIRE_LENGTH) break;
      return v.value.toString('utf8');
    case 'bytes':
      if (v.wireType !== WIRE_LENGTH) break;
      return v.value.toString('base64');
    case 'bool':
    case 'int32':
    case 'int64':
    case 'uint32':
    case 'uint64':
      if (v.wireType !== WIRE_VARINT) break;
      return varintAs(v.value, type);
    case 'double':
      if (v.wireType !== WIRE_FIXED64) break;
      return v.value.readDoubleLE(0);
    case 'float':
      if (v.wireType !== WIRE_FIXED32) break;
      return v.value.readFloatLE(0);
  }
  throw new ProtobufError(`wire type ${v.wireType} does not carry a ${type}`);
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false;
}

/** the JSON of a single (non-repeated) field from its occurrences; undefined for Go's null */
function decodeSingle(type: string, values: readonly WireValue[]): unknown {
  if (SCALARS.has(type)) return decodeScalar(type, values[values.length - 1]);
  return decodeMessageValue(type, mergedBytes(values));
}

function decodeMessageValue(type: string, bytes: Buffer): unknown {
  switch (type) {
    case QUANTITY:
    case QUANTITY_VALUE: {
      const text = lastLength(readFields(bytes).get(1));
      return text === undefined ? '0' : text.toString('utf8');
    }
    case INT_OR_STRING: {
      const fields = readFields(bytes);
      const kind = lastVarint(fields.get(1)) ?? 0;
      if (kind === 1 || kind === 1n) return lastLength(fields.get(3))?.toString('utf8') ?? '';
      const n = lastVarint(fields.get(2));
      return n === undefined ? 0 : varintAs(n, 'int32');
    }
    case TIME:
    case MICRO_TIME: {
      if (bytes.length === 0) return undefined;
      const fields = readFields(bytes);
      const seconds = varintAs(lastVarint(fields.get(1)) ?? 0, 'int64') as number;
      if (type === TIME) return formatTime(seconds);
      const nanos = varintAs(lastVarint(fields.get(2)) ?? 0, 'int32') as number;
      return formatMicroTime(seconds, nanos);
    }
    case DURATION: {
      const n = lastVarint(readFields(bytes).get(1)) ?? 0;
      return formatDuration(BigInt.asIntN(64, BigInt(n)));
    }
    case RAW_EXTENSION:
    case FIELDS_V1: {
      const raw = lastLength(readFields(bytes).get(1));
      return raw === undefined || raw.length === 0 ? undefined : decodeEmbedded(raw);
    }
    default: {
      const desc = messageNamed(type);
      if (desc.sliceWrapper) {
        const items = desc.fields[0];
        const list = decodeRepeated(items.type, readFields(bytes).get(items.number) ?? []);
        return list.length === 0 ? undefined : list;
      }
      return decodeBody(desc, bytes);
    }
  }
}

/** RawExtension/FieldsV1 bytes: JSON, or (from protobuf writers) an enveloped object */
function decodeEmbedded(raw: Buffer): unknown {
  if (raw.length >= PROTOBUF_MAGIC.length && raw.subarray(0, PROTOBUF_MAGIC.length).equals(PROTOBUF_MAGIC)) {
    return decodeObject(raw).object;
  }
  // the JSON nests inside the messages already open
  if (jsonTooDeep(raw, MAX_NESTING_DEPTH - messageNesting)) throw new ProtobufError(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new ProtobufError('embedded raw object is neither JSON nor protobuf');
  }
}

function decodeRepeated(type: string, values: readonly WireValue[]): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (VARINT_SCALARS.has(type) && v.wireType === WIRE_LENGTH) {
      // packed encoding
      for (const n of readPackedVarints(v.value)) out.push(varintAs(n, type as 'bool' | 'int32' | 'int64' | 'uint32' | 'uint64'));
    } else {
      // a zero time in a list prints as null in Go
      out.push(decodeSingle(type, [v]) ?? null);
    }
  }
  return out;
}

function decodeMap(field: FieldDescriptor, values: readonly WireValue[]): JsonObject {
  const map = field.map as NonNullable<FieldDescriptor['map']>;
  const entries: [string, unknown][] = [];
  for (const v of values) {
    if (v.wireType !== WIRE_LENGTH) throw new ProtobufError(`map entry of wire type ${v.wireType}`);
    const entry = readFields(v.value);
    const keyValues = entry.get(1);
    const key = keyValues ? String(decodeScalar(map.key, keyValues[keyValues.length - 1])) : '';
    const valueValues = entry.get(2);
    // an entry without value holds the zero value
    const value = valueValues ? decodeSingle(map.value, valueValues) : zeroOf(map.value);
    entries.push([key, value ?? null]);
  }
  // Go's JSON encoder sorts map keys
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const out: JsonObject = {};
  for (const [k, v] of entries) out[k] = v;
  return out;
}

function zeroOf(type: string): unknown {
  switch (type) {
    case 'string':
    case 'bytes':
      return '';
    case 'bool':
      return false;
    case 'int32':
    case 'int64':
    case 'uint32':
    case 'uint64':
    case 'double':
    case 'float':
      return 0;
    default:
      return decodeMessageValue(type, Buffer.alloc(0));
  }
}

/** how many messages deep the decoder is now: decoding is synchronous and recursive, and a
 *  recursive message type (JSONSchemaProps) or nested envelopes could otherwise nest without end */
let messageNesting = 0;

function decodeBody(desc: MessageDescriptor, bytes: Buffer): JsonObject {
  if (messageNesting >= MAX_NESTING_DEPTH) throw new ProtobufError(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
  messageNesting++;
  try {
    return decodeFields(desc, bytes);
  } finally {
    messageNesting--;
  }
}

function decodeFields(desc: MessageDescriptor, bytes: Buffer): JsonObject {
  const wire = readFields(bytes);
  const out: JsonObject = {};
  for (const field of desc.fields) {
    const values = wire.get(field.number);
    if (!values) continue;
    if (field.inline) {
      Object.assign(out, decodeBody(messageNamed(field.type), mergedBytes(values)));
    } else if (field.map) {
      out[field.jsonName] = decodeMap(field, values);
    } else if (field.repeated) {
      out[field.jsonName] = decodeRepeated(field.type, values);
    } else {
      const value = decodeSingle(field.type, values);
      if (value === undefined) continue;
      if (!field.keepZero && SCALARS.has(field.type) && isZero(value)) continue;
      out[field.jsonName] = value;
    }
  }
  return out;
}

function hasMagic(bytes: Uint8Array): boolean {
  if (bytes.length < PROTOBUF_MAGIC.length) return false;
  for (let i = 0; i < PROTOBUF_MAGIC.length; i++) if (bytes[i] !== PROTOBUF_MAGIC[i]) return false;
  return true;
}

/** Decodes an enveloped object (a protobuf request body). The envelope's kind and apiVersion
 *  win; `defaults` fill what it leaves empty (kube-apiserver uses the request's group version
 *  kind). Throws ProtobufError for bytes that are not an enveloped object of a built-in kind. */
export function decodeObject(bytes: Uint8Array, defaults?: Partial<GroupVersionKind>): DecodedObject {
  const data = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (data.length === 0) throw new ProtobufError('empty data');
  if (!hasMagic(data)) {
    throw new ProtobufError(`provided data does not appear to be a protobuf message, expected prefix [${[...PROTOBUF_MAGIC].join(' ')}]`);
  }
  if (data.length === PROTOBUF_MAGIC.length) throw new ProtobufError('empty body');
  const unknown = readFields(data.subarray(PROTOBUF_MAGIC.length));
  const typeMetaBytes = unknown.has(1) ? mergedBytes(unknown.get(1) ?? []) : Buffer.alloc(0);
  const typeMeta = readFields(typeMetaBytes);
  const contentEncoding = lastLength(unknown.get(3))?.toString('utf8') ?? '';
  if (contentEncoding !== '') throw new ProtobufError(`unsupported content encoding ${JSON.stringify(contentEncoding)}`);
  const contentType = lastLength(unknown.get(4))?.toString('utf8') ?? '';
  if (contentType !== '' && contentType !== PROTOBUF_MEDIA_TYPE) {
    throw new ProtobufError(`unsupported embedded content type ${JSON.stringify(contentType)}`);
  }

  let apiVersion = lastLength(typeMeta.get(1))?.toString('utf8') ?? '';
  let kind = lastLength(typeMeta.get(2))?.toString('utf8') ?? '';
  if (apiVersion === '' && defaults?.version)
    apiVersion = apiVersionOf({ group: defaults.group ?? '', version: defaults.version, kind: '' });
  if (kind === '' && defaults?.kind) kind = defaults.kind;
  if (kind === '') throw new ProtobufError("Object 'Kind' is missing in protobuf envelope");
  if (apiVersion === '') throw new ProtobufError("Object 'apiVersion' is missing in protobuf envelope");

  const desc = messageForKind({ ...parseApiVersion(apiVersion), kind });
  const raw = lastLength(unknown.get(2)) ?? Buffer.alloc(0);
  const object: JsonObject = { kind, apiVersion, ...decodeBody(desc, raw) };
  return { apiVersion, kind, object };
}

/** Decodes the complete frames of a protobuf watch stream; `rest` is an incomplete tail. */
export function decodeWatchEvents(stream: Uint8Array): { events: DecodedWatchEvent[]; rest: Buffer } {
  const data = Buffer.isBuffer(stream) ? stream : Buffer.from(stream.buffer, stream.byteOffset, stream.length);
  const events: DecodedWatchEvent[] = [];
  let pos = 0;
  while (pos + 4 <= data.length) {
    const length = data.readUInt32BE(pos);
    if (pos + 4 + length > data.length) break;
    const event = readFields(data.subarray(pos + 4, pos + 4 + length));
    const type = lastLength(event.get(1))?.toString('utf8') ?? '';
    const rawExtension = readFields(mergedBytes(event.get(2) ?? []));
    const raw = lastLength(rawExtension.get(1));
    if (raw === undefined) throw new ProtobufError('watch event without object');
    events.push({ type, ...decodeObject(raw) });
    pos += 4 + length;
  }
  return { events, rest: data.subarray(pos) };
}
