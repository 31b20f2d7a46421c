// `jsonpatch.escapeKey(key)`, the function kube's MutatingAdmissionPolicy environment offers
// for building JSON pointer paths out of map keys (RFC 6901: `~` as `~0`, `/` as `~1`).

import type { Environment } from '@marcbachmann/cel-js';

class JsonPatchNamespace {}

export const escapeJsonPointerKey = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

export function registerJsonPatchLibrary(env: Environment): Environment {
  return env
    .registerType('JsonPatchNamespace', JsonPatchNamespace)
    .registerConstant('jsonpatch', 'JsonPatchNamespace', new JsonPatchNamespace())
    .registerFunction('JsonPatchNamespace.escapeKey(string): string', (_ns: JsonPatchNamespace, key: string) => escapeJsonPointerKey(key));
}
