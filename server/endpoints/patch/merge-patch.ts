// JSON Merge Patch (RFC 7386) as the library kube-apiserver uses applies it: null members
// delete, objects merge recursively, anything else replaces; nulls inside added values are
// dropped.

import type { Json } from '../../machinery/json-patch.js';

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
}

/** removes null members from objects (also inside arrays), recursively */
function pruneNulls(v: Json): Json {
  if (Array.isArray(v)) return v.map((x) => (x === null ? x : pruneNulls(x)));
  if (isObject(v)) {
    const out: { [key: string]: Json } = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = pruneNulls(x);
    return out;
  }
  return v;
}

function mergeValue(current: Json | undefined, patch: Json): Json {
  if (!isObject(current)) return pruneNulls(patch);
  if (!isObject(patch)) return patch;
  return mergeObjects(current, patch);
}

function mergeObjects(doc: { [key: string]: Json }, patch: { [key: string]: Json }): { [key: string]: Json } {
  const out: { [key: string]: Json } = { ...doc };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete out[k];
    } else if (!(k in out) || out[k] === null) {
      out[k] = pruneNulls(v);
    } else {
      out[k] = mergeValue(out[k], v);
    }
  }
  return out;
}

export class MergePatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MergePatchError';
  }
}

/** Applies a merge patch to a document, returning a new value (the inputs are untouched).
 *  A patch that is not an object or array (or is null) is refused as the reference does. */
export function applyMergePatch(doc: Json, patch: Json): Json {
  if (patch === null || typeof patch !== 'object') throw new MergePatchError('Invalid JSON Patch');
  const base = structuredClone(doc);
  if (Array.isArray(patch)) return pruneNulls(structuredClone(patch));
  if (!isObject(base)) return pruneNulls(structuredClone(patch));
  return mergeObjects(base, structuredClone(patch));
}
