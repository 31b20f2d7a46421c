// Lists and objects in protobuf from their items' bytes, kept per stored version in the
// replica's encoded-item cache (protobuf/item-cache.ts). Only items that changed since an
// earlier request are decoded and encoded; the rest are the bytes made then. The bytes are
// those encodeList and encodeObject write for the same objects built whole.

import {
  encodeListHead,
  encodeListItem,
  encodeObjectHead,
  hasListPieces,
  sharesListItemBytes,
  type JsonObject,
} from '../protobuf/codec.js';
import { kindOf } from '../protobuf/http.js';
import { encodedItemCache } from '../protobuf/item-cache.js';
import type { KubeObject, StoredList, StoredObjectText } from '../../storage/interface.js';

interface TypeMeta {
  readonly kind: string;
  readonly apiVersion: string;
}

/**
 * The protobuf list of `stored`'s items, `envelope` giving its kind, apiVersion and metadata;
 * `item(i)` is the i-th item as the list holds it. Undefined when the list kind is not written
 * in pieces or an item cannot be made: the caller then builds the list whole, which answers
 * such an item as it always has.
 */
export function protobufListPieces(
  envelope: TypeMeta & { metadata: object },
  stored: StoredList,
  item: (i: number) => KubeObject,
): Uint8Array[] | undefined {
  const gvk = kindOf(envelope)!;
  if (!hasListPieces(gvk)) return undefined;
  const cache = encodedItemCache();
  const form = formOf(envelope);
  const pieces: Uint8Array[] = new Array<Uint8Array>(stored.items.length + 1);
  let itemsBytes = 0;
  try {
    for (let i = 0; i < stored.items.length; i++) {
      const bytes = cache.get(stored.items[i], form, () => encodeListItem(item(i) as JsonObject, gvk));
      pieces[i + 1] = bytes;
      itemsBytes += bytes.length;
    }
    pieces[0] = encodeListHead(envelope as unknown as JsonObject, gvk, itemsBytes);
  } catch {
    return undefined;
  }
  return pieces;
}

/**
 * The protobuf body of one object read by name (of kind `object`), from the bytes it has as an
 * item of a list of kind `list`, which lists and gets share. Undefined when the kinds do not
 * share them or the object cannot be made; `toObject` is the object as get answers it.
 */
export function protobufObjectBody(
  object: TypeMeta,
  list: TypeMeta,
  item: StoredObjectText,
  toObject: () => KubeObject,
): Buffer | undefined {
  // kind and apiVersion are always set on what the store passes here
  const gvk = kindOf(object)!;
  const listGvk = kindOf(list)!;
  if (!sharesListItemBytes(gvk, listGvk)) return undefined;
  try {
    const bytes = encodedItemCache().get(item, formOf(list), () => encodeListItem(toObject() as JsonObject, listGvk));
    return Buffer.concat([encodeObjectHead(gvk), bytes]);
  } catch {
    return undefined;
  }
}

function formOf(list: TypeMeta): string {
  return `${list.apiVersion}/${list.kind}`;
}
