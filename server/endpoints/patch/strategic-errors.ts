// Why a strategic merge patch does not apply, with the HTTP answer kube-apiserver gives: a few
// malformed-patch errors are 400, lists of lists and retainKeys mismatches 422, and everything
// else reaches the client as a plain error (500 without a reason) carrying the message.

import type { Json } from '../../machinery/json-patch.js';
import { goFormat, goFormatString, goTypeName, goTypeOf, type GoType, type JsonObject } from './strategic-go.js';

export type StrategicErrorClass = 'BadRequest' | 'Unprocessable' | 'Internal';

export class StrategicMergePatchError extends Error {
  constructor(
    readonly errorClass: StrategicErrorClass,
    message: string,
  ) {
    super(message);
    this.name = 'StrategicMergePatchError';
  }
}

const badRequest = (message: string) => new StrategicMergePatchError('BadRequest', message);
const internal = (message: string) => new StrategicMergePatchError('Internal', message);

export const smpErrors = {
  badPatchFormatForPrimitiveList: () => badRequest('invalid patch format of primitive list'),
  badPatchFormatForRetainKeys: () => badRequest('invalid patch format of retainKeys'),
  badPatchFormatForSetElementOrderList: () => badRequest('invalid patch format of setElementOrder list'),
  noListOfLists: () => new StrategicMergePatchError('Unprocessable', 'lists of lists are not supported'),
  noMergeKey: (m: JsonObject, key: string) => internal(`map: ${goFormat(m)} does not contain declared merge key: ${key}`),
  /** `expected` is the Go type the code asserted, `actual` the value it found */
  badArgType: (expected: GoType, actual: Json | undefined) =>
    internal(`expected a ${goTypeName(expected)}, but received a ${goTypeName(goTypeOf(actual))}`),
  badPatchType: (directive: Json | undefined, m: JsonObject) =>
    internal(`unknown patch type: ${goFormatString(directive)} in map: ${goFormat(m)}`),
  mergeDirectiveInList: () => internal('merging lists cannot yet be specified in the patch'),
  mergeListWithoutKey: (schemaName: string) => internal(`cannot merge lists without merge key for ${schemaName}`),
  elementTypesDiffer: (lists: Json[][]) => internal(`list element types are not identical: ${goFormat(lists)}`),
  noElements: () => internal('no elements in any of the given slices'),
  orderMismatch: (patchList: Json[], orderList: Json[]) =>
    internal(`The order in patch list:\n${goFormat(patchList)}\n doesn't match $setElementOrder list:\n${goFormat(orderList)}\n`),
  notAMapInList: (index: number) => internal(`value for key ${index} is not a map`),
  unexpectedStrategy: (strategies: readonly string[]) => internal(`unexpected patch strategy: ${goFormat([...strategies])}`),
};
