// A list in protobuf as pieces: its head, then each item's bytes, kept per stored version in
// the replica's encoded-item cache (protobuf/item-cache.ts). Only items that changed since an
// earlier list are decoded and encoded; the rest are the bytes made then. The bytes are those
// encodeList writes for the whole list built from the same items.

import type { GroupVersionKind } from '../apis/types.js';
import { encodeListHead, encodeListItem, hasListPieces, type JsonObject } from '../protobuf/codec.js';
import { encodedItemCache } from '../protobuf/item-cache.js';
import type { KubeObject, StoredList } from '../../storage/interface.js';

/**
 * The protobuf list of `stored`'s items, `envelope` giving its kind, apiVersion and metadata;
 * `item(i)` is the i-th item as the list holds it. Undefined when the list kind is not written
 * in pieces or an item cannot be made: the caller then builds the list whole, which answers
 * such an item as it always has.
 */
export function protobufListPieces(
  envelope: { kind: string; apiVersion: string; metadata: object },
  stored: StoredList,
  item: (i: number) => KubeObject,
): Uint8Array[] | undefined {
  const gvk = listKindOf(envelope);
  if (!hasListPieces(gvk)) return undefined;
  const cache = encodedItemCache();
  const form = `${envelope.apiVersion}/${envelope.kind}`;
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

function listKindOf(envelope: { kind: string; apiVersion: string }): GroupVersionKind {
  const slash = envelope.apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: envelope.apiVersion, kind: envelope.kind }
    : { group: envelope.apiVersion.slice(0, slash), version: envelope.apiVersion.slice(slash + 1), kind: envelope.kind };
}
