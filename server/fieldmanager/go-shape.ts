// Built-in objects as kube-apiserver's field manager sees them: it reads Go structs through
// their json tags, so a field that is unset is absent, null or a zero value depending on its
// Go type and `omitempty`, an `omitempty` zero value is absent, and members the Go type does
// not have do not exist. Field ownership is computed on objects in this shape, which is also
// why the empty object a create is compared with matters: its `spec.template` is already there
// (so the creator does not own it as a whole) while `data` of a ConfigMap is not.
// The per-field facts come from generated/go-fields.json (scripts/generate-go-fields.mjs).

import { readGeneratedJson } from '../apis/assets.js';
import type { SchemaNode, SchemaRegistry } from '../apis/schema.js';
import { isMap, type Json, type JsonMap } from './value.js';

/** o: omitempty value, N: nil is null, z: zero scalar, s: struct by value; absent: omitempty pointer */
type FieldCode = 'o' | 'N' | 'z' | 's' | 'p';

const TIME_TYPES = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.Time', 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime']);

/** zero values of structs that serialize themselves */
const SELF_SERIALIZING_ZERO: Record<string, Json> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': null,
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': null,
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': 0,
  'io.k8s.apimachinery.pkg.api.resource.Quantity': '0',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Duration': '0s',
  'io.k8s.apimachinery.pkg.runtime.RawExtension': null,
};

let cachedCodes: Record<string, Record<string, FieldCode>> | undefined;

function codes(): Record<string, Record<string, FieldCode>> {
  cachedCodes ??= readGeneratedJson('go-fields.json') as Record<string, Record<string, FieldCode>>;
  return cachedCodes;
}

function isEmptyValue(v: Json): boolean {
  if (v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isMap(v) && Object.keys(v).length === 0;
}

export class GoShape {
  constructor(private readonly schemas: SchemaRegistry) {}

  /** `obj` (of the definition `name`) as Go would hand it to the field manager */
  of(obj: JsonMap, name: string): JsonMap {
    const out = this.value(obj, { ref: name });
    return isMap(out) ? out : {};
  }

  /** the empty object of a definition */
  zero(name: string): JsonMap {
    return this.of({}, name);
  }

  /** What Go's typed round trip leaves of a merged object: null members and `omitempty`
   *  members with zero values are gone, unknown members too; nothing is added. */
  clean(obj: JsonMap, name: string): JsonMap {
    const out = this.value(obj, { ref: name }, false);
    return isMap(out) ? out : {};
  }

  private value(v: Json, node: SchemaNode, fill = true): Json {
    if (node.ref !== undefined && (TIME_TYPES.has(node.ref) || node.ref in SELF_SERIALIZING_ZERO)) return v;
    const resolved = this.schemas.resolve(node);
    if (Array.isArray(v)) {
      const items = resolved.items;
      return items ? v.map((x) => (x === null ? null : this.value(x, items, fill))) : v;
    }
    if (!isMap(v) || resolved.type !== 'object') return v;
    if (resolved.properties && node.ref !== undefined) return this.struct(v, node.ref, resolved, fill);
    const ap = resolved.additionalProperties;
    if (ap && typeof ap === 'object' && !resolved.properties) {
      const out: JsonMap = {};
      for (const k of Object.keys(v)) {
        const x = v[k];
        if (x !== null) out[k] = this.value(x, ap, fill);
        else if (fill) out[k] = null;
      }
      return out;
    }
    return v;
  }

  private struct(v: JsonMap, name: string, resolved: SchemaNode, fill: boolean): JsonMap {
    const props = resolved.properties ?? {};
    const fieldCodes = codes()[name] ?? {};
    const out: JsonMap = {};
    for (const key of Object.keys(v)) {
      const x = v[key];
      const prop = Object.hasOwn(props, key) ? props[key] : undefined;
      // the Go type has no such member
      if (!prop) continue;
      const code = fieldCodes[key] ?? 'p';
      if (x === null) {
        const zero = fill ? this.unset(code, prop) : undefined;
        if (zero !== undefined) out[key] = zero;
        continue;
      }
      if (code === 'o' && isEmptyValue(x)) continue;
      out[key] = this.value(x, prop, fill);
    }
    if (!fill) return out;
    for (const [key, code] of this.filledFields(name, fieldCodes, props)) {
      if (Object.hasOwn(out, key) || Object.hasOwn(v, key)) continue;
      const zero = this.unset(code, props[key]!);
      if (zero !== undefined) out[key] = zero;
    }
    return out;
  }

  /** the members of a definition an unset value shows up as (null, a zero scalar or a zero
   *  struct), made once per definition: the others stay absent and need no look */
  private readonly fillLists = new Map<string, [string, FieldCode][]>();

  private filledFields(name: string, fieldCodes: Record<string, FieldCode>, props: Record<string, SchemaNode>): [string, FieldCode][] {
    let list = this.fillLists.get(name);
    if (!list) {
      list = Object.entries(fieldCodes).filter(
        ([key, code]) => Object.hasOwn(props, key) && (code === 'N' || code === 'z' || code === 's'),
      );
      this.fillLists.set(name, list);
    }
    return list;
  }

  /** what an unset field of this code shows as; undefined when it is left out */
  private unset(code: FieldCode, prop: SchemaNode): Json | undefined {
    switch (code) {
      case 'N':
        return null;
      case 'z': {
        const t = this.schemas.resolve(prop);
        if (t.intOrString) return 0;
        if (t.type === 'string') return '';
        if (t.type === 'boolean') return false;
        return 0;
      }
      case 's': {
        if (prop.ref !== undefined && prop.ref in SELF_SERIALIZING_ZERO) return SELF_SERIALIZING_ZERO[prop.ref];
        const t = this.schemas.resolve(prop);
        if (!t.properties || prop.ref === undefined) return null;
        return this.struct({}, prop.ref, t, true);
      }
      default:
        return undefined;
    }
  }
}
