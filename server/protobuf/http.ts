// The protobuf media type at the HTTP layer: response bodies and watch frames for objects
// that name their own kind and apiVersion (as every object kapi serves does), and request
// bodies decoded to JSON.

import type { GroupVersionKind } from '../apis/types.js';
import { decodeObject, encodeObject, encodeWatchEvent, hasProtobufMessage, ProtobufError, type JsonObject } from './codec.js';

export { PROTOBUF_MEDIA_TYPE } from './codec.js';

const STATUS_KIND: GroupVersionKind = { group: '', version: 'v1', kind: 'Status' };

/** the group/version/kind an object names, or undefined */
export function kindOf(obj: unknown): GroupVersionKind | undefined {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  const { kind, apiVersion } = obj as { kind?: unknown; apiVersion?: unknown };
  if (typeof kind !== 'string' || kind === '' || typeof apiVersion !== 'string' || apiVersion === '') return undefined;
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion, kind }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1), kind };
}

/** whether objects of a kind (and their lists) can be served as protobuf */
export function servesProtobuf(kind: GroupVersionKind): boolean {
  return hasProtobufMessage(kind);
}

/** The protobuf body of a response object (its own kind, else `fallback`), or undefined when
 *  the object has no protobuf form or does not fit it (the caller then answers in JSON, which
 *  client-go reads just as well: it decodes by the response Content-Type). */
export function protobufBody(obj: unknown, fallback?: GroupVersionKind): Buffer | undefined {
  const gvk = kindOf(obj) ?? fallback;
  if (!gvk || !hasProtobufMessage(gvk)) return undefined;
  try {
    return encodeObject(obj as JsonObject, gvk);
  } catch (err) {
    if (err instanceof ProtobufError) return undefined;
    throw err;
  }
}

/** One length-prefixed watch frame. An object without a (fitting) protobuf form becomes an
 *  ERROR event carrying a 500 Status, since a stream cannot change its media type midway. */
export function protobufWatchFrame(type: string, obj: unknown, fallback?: GroupVersionKind): Buffer {
  const gvk = kindOf(obj) ?? fallback;
  let problem = `object of kind ${gvk?.kind ?? 'unknown'} has no protobuf form`;
  if (gvk && hasProtobufMessage(gvk)) {
    try {
      return encodeWatchEvent(type, obj as JsonObject, gvk);
    } catch (err) {
      if (!(err instanceof ProtobufError)) throw err;
      problem = err.message;
    }
  }
  const status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `unable to encode watch object: ${problem}`,
    reason: 'InternalError',
    code: 500,
  };
  return encodeWatchEvent('ERROR', status, STATUS_KIND);
}

export class UnsupportedProtobufKind extends Error {}

/** Decodes a protobuf request body to its JSON object. Throws UnsupportedProtobufKind for a
 *  kind without a protobuf form (custom resources), ProtobufError for malformed bytes. */
export function decodeProtobufBody(body: Buffer, defaults?: GroupVersionKind): JsonObject {
  try {
    return decodeObject(body, defaults).object;
  } catch (err) {
    if (err instanceof ProtobufError && /has no protobuf serialization/.test(err.message)) throw new UnsupportedProtobufKind(err.message);
    throw err;
  }
}
