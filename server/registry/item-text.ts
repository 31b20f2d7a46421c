// A list item, or an object read by name, written from the stored JSON text instead of
// decoding and encoding it again. Storage keeps an object as the JSON the store wrote (kube's
// field order, no resourceVersion); a typed list's item differs from that text only in three
// places: no `kind` or `apiVersion`, `metadata.resourceVersion` at its ObjectMeta position,
// and Go's escapes (an object read by name keeps its `kind` and `apiVersion`). An object's text is checked once per stored version against the decoded path (the
// edit must give the very bytes the decoder and encoder give); from then on the item is a few
// slices of the text, or, where the storage holds the text's bytes and they are ASCII that
// needs no escapes, of those bytes (no text is made at all). Texts written elsewhere (another field order, whitespace, numbers or
// escapes JSON.stringify writes differently) fail the check and keep the decoded path.

import { OBJECT_META_ORDER, type KubeObject, type StoredObjectText } from '../../storage/interface.js';
import { goEscape, needsGoEscape } from '../machinery/go-json.js';

/** where the edits go in one stored text */
interface TextEdits {
  /** the first member after the leading `kind` and `apiVersion` */
  readonly bodyStart: number;
  /** where `resourceVersion` goes, with the comma `rvText` carries */
  readonly rvAt: number;
  readonly rvText: string;
  readonly escape: boolean;
  /** the stored bytes may be written as they are around the edits: the text is ASCII (its
   *  character offsets are its byte offsets) and needs no Go escapes */
  readonly asBytes: boolean;
}

/** a list item or object as the stored bytes around its edits: `{`, bytes [bodyStart, rvAt),
 *  rvText, bytes [rvAt, end) */
export interface ItemBytes {
  readonly bytes: Uint8Array;
  readonly bodyStart: number;
  readonly rvAt: number;
  readonly rvText: string;
}

const META_ORDER = OBJECT_META_ORDER;
const RV_RANK = META_ORDER.indexOf('resourceVersion');
const metaRank = new Map(META_ORDER.map((k, i) => [k, i]));

interface Member {
  key: string;
  /** the opening quote of the key */
  start: number;
  valueStart: number;
  valueEnd: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const NEWLINE = 0x0a;

/** the index after the string opening at `i`, or -1 */
function skipString(s: string, i: number): number {
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

/** the index after the value starting at `i`, or -1 (the text is compact JSON or the check fails) */
function skipValue(s: string, i: number): number {
  const first = s[i];
  if (first === '"') return skipString(s, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    while (i < s.length) {
      const c = s[i];
      if (c === '"') {
        i = skipString(s, i);
        if (i < 0) return -1;
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }
  while (i < s.length && s[i] !== ',' && s[i] !== '}' && s[i] !== ']') i++;
  return i;
}

/** the members of the compact JSON object opening at `start`, or undefined */
function membersOf(s: string, start: number): Member[] | undefined {
  if (s[start] !== '{') return undefined;
  const out: Member[] = [];
  let i = start + 1;
  if (s[i] === '}') return out;
  for (;;) {
    if (s[i] !== '"') return undefined;
    const keyEnd = skipString(s, i);
    if (keyEnd < 0 || s[keyEnd] !== ':') return undefined;
    const valueEnd = skipValue(s, keyEnd + 1);
    if (valueEnd < 0) return undefined;
    out.push({ key: s.slice(i + 1, keyEnd - 1), start: i, valueStart: keyEnd + 1, valueEnd });
    if (s[valueEnd] === '}') return out;
    if (s[valueEnd] !== ',') return undefined;
    i = valueEnd + 1;
  }
}

/** where the edits would go in `text`, before checking that they give the decoded path's bytes */
function findEdits(text: string, byteLength: number, resourceVersion: string, keepTypeMeta: boolean): TextEdits | undefined {
  const top = membersOf(text, 0);
  if (!top) return undefined;
  let first = 0;
  while (!keepTypeMeta && first < top.length && (top[first]!.key === 'kind' || top[first]!.key === 'apiVersion')) first++;
  const metadata = top.find((m) => m.key === 'metadata');
  if (!metadata || first === top.length) return undefined;
  const meta = membersOf(text, metadata.valueStart);
  if (!meta || meta.some((m) => m.key === 'resourceVersion')) return undefined;
  const rv = `"resourceVersion":${JSON.stringify(resourceVersion)}`;
  const after = meta.find((m) => (metaRank.get(m.key) ?? Infinity) > RV_RANK);
  const edits = after ? { rvAt: after.start, rvText: `${rv},` } : { rvAt: metadata.valueEnd - 1, rvText: meta.length > 0 ? `,${rv}` : rv };
  const escape = needsGoEscape(text);
  return { bodyStart: top[first]!.start, ...edits, escape, asBytes: !escape && byteLength === text.length };
}

function applyEdits(text: string, edits: TextEdits): string {
  const out = '{' + text.slice(edits.bodyStart, edits.rvAt) + edits.rvText + text.slice(edits.rvAt);
  return edits.escape ? goEscape(out) : out;
}

/** decodes a stored text into a fresh object, as the storage that holds it does */
export type DecodeStored = (stored: StoredObjectText) => KubeObject;

/**
 * The JSON texts of one store's list items (or, with `keepTypeMeta`, of its objects read by
 * name). `toItem` is the decoded path: a freshly decoded object made the item the store hands
 * out (converted; for list items without kind and apiVersion); it must depend on the object
 * alone, which holds when the request's version is the storage version.
 */
export class ListItemTexts {
  /** per stored version: its edits, or null when only the decoded path gives its bytes */
  private readonly edits = new WeakMap<StoredObjectText, TextEdits | null>();

  constructor(
    private readonly toItem: (decoded: KubeObject) => KubeObject,
    private readonly keepTypeMeta = false,
  ) {}

  /** checks every item not seen before (decoding them: a text that does not decode fails
   *  here, before anything is written); false when an item cannot be read at all */
  prepare(items: readonly StoredObjectText[], decode: DecodeStored): boolean {
    for (const item of items) {
      if (item.error !== undefined) return false;
      if (!this.edits.has(item)) this.check(item, decode);
    }
    return true;
  }

  /** the item's JSON text: goEscape(JSON.stringify(toItem(decode(stored)))) */
  text(stored: StoredObjectText, decode: DecodeStored): string {
    let edits = this.edits.get(stored);
    if (edits === undefined) edits = this.check(stored, decode);
    return edits ? applyEdits(stored.data, edits) : this.decodedText(stored, decode);
  }

  /** the item as its stored bytes around the edits, when they give its text (the item is
   *  checked first if it was not seen before); undefined when only text gives it */
  bytes(stored: StoredObjectText, decode: DecodeStored): ItemBytes | undefined {
    if (stored.bytes === undefined) return undefined;
    let edits = this.edits.get(stored);
    if (edits === undefined) edits = this.check(stored, decode);
    if (!edits || !edits.asBytes) return undefined;
    return { bytes: stored.bytes, bodyStart: edits.bodyStart, rvAt: edits.rvAt, rvText: edits.rvText };
  }

  /** the item's JSON text and a newline (Go's encoder ends a document with one), as UTF-8:
   *  the stored bytes around the edits where they give it */
  body(stored: StoredObjectText, decode: DecodeStored): Buffer {
    const item = this.bytes(stored, decode);
    if (!item) return Buffer.from(this.text(stored, decode) + '\n', 'utf8');
    const { bytes, bodyStart, rvAt, rvText } = item;
    const out = Buffer.allocUnsafe(1 + (rvAt - bodyStart) + rvText.length + (bytes.length - rvAt) + 1);
    out[0] = OPEN_BRACE;
    out.set(bytes.subarray(bodyStart, rvAt), 1);
    let at = 1 + rvAt - bodyStart;
    at += out.write(rvText, at, 'latin1');
    out.set(bytes.subarray(rvAt), at);
    out[out.length - 1] = NEWLINE;
    return out;
  }

  private decodedText(stored: StoredObjectText, decode: DecodeStored): string {
    return goEscape(JSON.stringify(this.toItem(decode(stored))));
  }

  private check(stored: StoredObjectText, decode: DecodeStored): TextEdits | null {
    const expected = this.decodedText(stored, decode);
    const text = stored.data;
    const found = findEdits(text, stored.bytes?.length ?? -1, String(stored.modRevision), this.keepTypeMeta);
    const edits = found && applyEdits(text, found) === expected ? found : null;
    this.edits.set(stored, edits);
    return edits;
  }
}
