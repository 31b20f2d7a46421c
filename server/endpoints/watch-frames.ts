// Encoded watch frames shared between watchers. A change delivered to many watchers reaches
// each of them as the same frozen event object (the watch cache decodes it once per
// predicate outcome, the registry converts it once per store), so the bytes of that event in
// one encoding are computed once and written to every stream that asks for that encoding.
// Events made for one watcher (bookmarks, errors, Table rows with per-stream headers) are
// never looked up here: they are different objects, and the caller does not cache them.

import type { WatchEvent } from '../../storage/interface.js';
import { markShared } from '../request/shared-bytes.js';

const frames = new WeakMap<WatchEvent, Map<string, Buffer>>();

/** the bytes of `event` in the encoding named `encoding`, computed by `encode` on first use;
 *  kept as long as the event object is alive (until every watcher has written it) */
export function sharedFrame(event: WatchEvent, encoding: string, encode: () => string | Buffer): Buffer {
  let byEncoding = frames.get(event);
  if (!byEncoding) {
    byEncoding = new Map();
    frames.set(event, byEncoding);
  }
  let bytes = byEncoding.get(encoding);
  if (!bytes) {
    const encoded = encode();
    bytes = markShared(typeof encoded === 'string' ? Buffer.from(encoded) : encoded);
    byEncoding.set(encoding, bytes);
  }
  return bytes;
}
