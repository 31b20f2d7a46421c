// GET of a collection: a (possibly chunked) list at a resource version.
//
// A list in the storage version as compact JSON is written from the stored texts of its
// items, as the client takes it (nothing is built whole); one in protobuf from its items'
// encoded bytes, kept per stored version in the encoded-item cache. Every other form (another version,
// protobuf, YAML, CBOR, Table, pretty JSON) is built whole; it first reserves its estimated
// size in the replica's response budget, and waits, or is refused with a 429, when the budget
// is spent.

import { isCompactJson, writeObject } from '../request/response.js';
import { writeTextBody } from '../request/stream-body.js';
import { unreadResponseBudget } from '../request/unread-budget.js';
import { applyNameToListOptions, listRequestOptions, readListOptions, validateListOptions } from './options.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

/** what building a list whole costs per byte of its items' stored text: the decoded objects,
 *  the encoded text and its bytes (measured near 4 for ConfigMaps and Pods) */
export const BUILT_LIST_BYTES_PER_STORED_BYTE = 4;

export async function serveList(scope: Scope): Promise<void> {
  // kube-apiserver validates the options before it negotiates the response
  const opts = readListOptions(scope.state.query);
  validateListOptions(opts, scope.config.watchListEnabled);
  const media = negotiateFor(scope);
  // a list has no name in its path; one from a metadata.name field selector narrows it
  applyNameToListOptions(opts, scope.name, false);
  const tableOptions = tableOptionsFor(scope, media);
  const ctx = requestContext(scope);
  if (!scope.resource.openList) {
    const list = await scope.resource.list(ctx, listRequestOptions(opts));
    await writeObject(scope.state, 200, transformResult(scope, media, list, tableOptions), media);
    return;
  }
  const prepared = await scope.resource.openList(ctx, listRequestOptions(opts));
  const text = isCompactJson(scope.state, media) ? prepared.jsonText() : undefined;
  if (text) {
    await writeTextBody(scope.state, 200, text, media.contentType, prepared.storedBytes);
    return;
  }
  if (media.format === 'protobuf' && !media.convert) {
    // the items' bytes come from the encoded-item cache, or are made (and kept) now: what is
    // made here at most is about the items' stored size
    const producing = await unreadResponseBudget().reserve(prepared.storedBytes, scope.state.signal);
    try {
      const pieces = prepared.protobufPieces();
      if (pieces) {
        await writeTextBody(scope.state, 200, pieces, media.contentType, prepared.storedBytes, false);
        return;
      }
    } finally {
      producing.release();
    }
  }
  const producing = await unreadResponseBudget().reserve(prepared.storedBytes * BUILT_LIST_BYTES_PER_STORED_BYTE, scope.state.signal);
  try {
    await writeObject(scope.state, 200, transformResult(scope, media, prepared.toObject(), tableOptions), media, { producing });
  } finally {
    producing.release();
  }
}
