// Turning a mutation's CEL result into the mutated object, as kube's policy patchers do:
// `JSONPatch`: a list of JSONPatch{op, path, from, value} values applied in order (a failed
// `test` leaves the object as it was); `ApplyConfiguration`: an `Object{...}` value merged into
// the object with server-side apply's merge (maps by member, lists by their list type), where
// an atomic list, map or struct may not be set at all.

import { MessageLiteral, messageToJson } from '../../../cel/message-literals.js';
import { MAX_JSON_PATCH_OPERATIONS } from '../../../limits/decode-limits.js';
import { applyJsonPatch, JsonPatchError, type Json, type JsonPatchOperation } from '../../../machinery/json-patch.js';
import { MergeError, mergeTyped } from '../../../fieldmanager/typed-merge.js';
import type { TypeRef } from '../../../fieldmanager/schema.js';
import type { KubeObject } from '../../../../storage/interface.js';

/** a mutation that could not be applied; the message is kube's */
export class MutationError extends Error {}

const JSON_PATCH_OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** the JSON patch operations of a JSONPatch expression's result */
export function jsonPatchOperations(result: unknown): JsonPatchOperation[] {
  if (!Array.isArray(result)) throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array');
  if (result.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new MutationError(
      `JSON Patch: the allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, but found ${result.length}`,
    );
  }
  return result.map((item) => {
    if (!(item instanceof MessageLiteral) || item.typeName !== 'JSONPatch') {
      throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch');
    }
    const f = item.fields;
    for (const key of Object.keys(f)) {
      if (!['op', 'path', 'from', 'value'].includes(key)) throw new MutationError(`type mismatch: JSONPatch has no field '${key}'`);
    }
    const op = typeof f['op'] === 'string' ? f['op'] : '';
    const operation: JsonPatchOperation = { op, path: typeof f['path'] === 'string' ? f['path'] : '', hasValue: 'value' in f };
    if (typeof f['from'] === 'string' && f['from'] !== '') operation.from = f['from'];
    if ('value' in f) operation.value = messageToJson(f['value']) as Json;
    return operation;
  });
}

/** the object after a JSONPatch mutation */
export function applyJsonPatchMutation(object: KubeObject, result: unknown): KubeObject {
  const ops = jsonPatchOperations(result);
  for (const op of ops) {
    if (!JSON_PATCH_OPS.has(op.op as string)) throw new MutationError(`JSON Patch: Unexpected kind: ${String(op.op)}`);
  }
  try {
    return applyJsonPatch(object as unknown as Json, ops) as unknown as KubeObject;
  } catch (err) {
    if (err instanceof JsonPatchError && /test failed/.test(err.message)) return object;
    throw new MutationError(`JSON Patch: ${(err as Error).message}`);
  }
}

/** fieldpath's rendering of a path element: `.name` for fields, `[i]` for list items */
function pathString(path: readonly (string | number)[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
}

/** the paths of atomic lists, maps and structs that an apply configuration sets */
export function atomicPaths(value: Json, type: TypeRef, path: (string | number)[] = []): string[] {
  const atom = type.atom();
  const out: string[] = [];
  if (atom.map && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    if (atom.map.atomic) out.push(pathString(path));
    for (const [key, member] of Object.entries(value)) {
      // only declared fields are followed, as structured-merge-diff does
      const t = atom.map.fields.get(key);
      if (t) out.push(...atomicPaths(member, t, [...path, key]));
    }
  }
  if (atom.list && Array.isArray(value)) {
    if (atom.list.atomic) out.push(pathString(path));
    value.forEach((item, i) => out.push(...atomicPaths(item, atom.list!.element, [...path, i])));
  }
  return out;
}

/** the object after an ApplyConfiguration mutation; `type`: the schema of the object's kind */
export function applyConfigurationMutation(object: KubeObject, result: unknown, type: TypeRef): KubeObject {
  if (!(result instanceof MessageLiteral)) {
    throw new MutationError(
      `unsupported return type from ApplyConfiguration expression: ${result === null ? 'null_type' : Array.isArray(result) ? 'list' : typeof result === 'object' ? 'map' : typeof result}`,
    );
  }
  checkTypeNames(result, 'Object');
  const patch = messageToJson(result) as { [key: string]: Json };
  // the configuration is of the object's own kind
  if (object.apiVersion) patch['apiVersion'] = object.apiVersion;
  if (object.kind) patch['kind'] = object.kind;
  const atomics = atomicPaths(patch, type);
  if (atomics.length > 0)
    throw new MutationError(
      `error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`,
    );
  try {
    return mergeTyped(object as unknown as Json, patch, type) as unknown as KubeObject;
  } catch (err) {
    if (err instanceof MergeError) throw new MutationError(`error applying patch: failed to merge patch: ${err.message}`);
    throw err;
  }
}

/** kube's check that `Object.spec{...}` is only used as the value of the field `spec` of an
 *  `Object{...}`: each nested message's type name is its parent's followed by the field */
function checkTypeNames(message: MessageLiteral, expected: string): void {
  if (message.typeName !== expected) {
    throw new MutationError(
      `type mismatch: unexpected type name "${message.typeName}", expected "${expected}", which matches field name path from root Object type`,
    );
  }
  for (const [field, value] of Object.entries(message.fields)) checkNested(value, `${expected}.${field}`);
}

function checkNested(value: unknown, expected: string): void {
  if (value instanceof MessageLiteral) checkTypeNames(value, expected);
  else if (Array.isArray(value)) for (const item of value) checkNested(item, expected);
}
