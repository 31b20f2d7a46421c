// Built-in objects as kube-apiserver's field manager sees them: it reads Go structs through
// their json tags, so a field that is unset is absent, null or a zero value depending on its
// Go type and `omitempty`, an `omitempty` zero value is absent, and members the Go type does
// not have do not exist. Field ownership is computed on objects in this shape, which is also
// why the empty object a create is compared with matters: its `spec.template` is already there
// (so the creator does not own it as a whole) while `data` of a ConfigMap is not.
// The per-field facts come from generated/go-fields.json (scripts/generate-go-fields.mjs).

import { readGeneratedJson } from '../apis/assets.js';
import type { SchemaNode, SchemaRegistry } from '../apis/schema.js';
import { deepFreeze } from '../registry/object.js';
import { isEmptyMap, isMap, type Json, type JsonMap } from './value.js';

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
  return isMap(v) && isEmptyMap(v);
}

/** how values of one schema node are shaped, worked out once per node */
interface NodePlan {
  /** values are returned as they are (self-serializing structs: times, quantities...) */
  readonly asIs: boolean;
  /** the schema of list items */
  readonly items?: SchemaNode;
  /** an object with properties of a definition: a Go struct */
  readonly struct?: StructPlan;
  /** an object with only additionalProperties: a Go map, of values of this schema */
  readonly mapValues?: SchemaNode;
}

interface StructMember {
  readonly prop: SchemaNode;
  readonly code: FieldCode;
  /** the plan of `prop`, on first use (definitions are recursive) */
  plan?: NodePlan;
}

interface StructPlan {
  /** the Go type's members by JSON name */
  readonly members: ReadonlyMap<string, StructMember>;
  /** the members an unset value shows up as (null, a zero scalar or a zero struct) */
  readonly filled: readonly (StructMember & { readonly key: string })[];
}

const AS_IS: NodePlan = { asIs: true };

export class GoShape {
  constructor(private readonly schemas: SchemaRegistry) {}

  /** plans by schema node, and of top-level definitions by name (`of` gets a name) */
  private readonly plans = new Map<SchemaNode, NodePlan>();
  private readonly definitionPlans = new Map<string, NodePlan>();
  /** the zero struct of each definition, frozen: shaped objects are only read */
  private readonly zeroStructs = new Map<string, JsonMap>();

  /** `obj` (of the definition `name`) as Go would hand it to the field manager */
  of(obj: JsonMap, name: string): JsonMap {
    const out = this.value(obj, this.definitionPlan(name), true);
    return isMap(out) ? out : {};
  }

  /** the empty object of a definition */
  zero(name: string): JsonMap {
    return this.of({}, name);
  }

  /** What Go's typed round trip leaves of a merged object: null members and `omitempty`
   *  members with zero values are gone, unknown members too; nothing is added. */
  clean(obj: JsonMap, name: string): JsonMap {
    const out = this.value(obj, this.definitionPlan(name), false);
    return isMap(out) ? out : {};
  }

  private definitionPlan(name: string): NodePlan {
    let plan = this.definitionPlans.get(name);
    if (!plan) {
      plan = this.buildPlan({ ref: name });
      this.definitionPlans.set(name, plan);
    }
    return plan;
  }

  private planOf(node: SchemaNode): NodePlan {
    let plan = this.plans.get(node);
    if (!plan) {
      plan = this.buildPlan(node);
      this.plans.set(node, plan);
    }
    return plan;
  }

  private buildPlan(node: SchemaNode): NodePlan {
    if (node.ref !== undefined && (TIME_TYPES.has(node.ref) || node.ref in SELF_SERIALIZING_ZERO)) return AS_IS;
    const resolved = this.schemas.resolve(node);
    const isObject = resolved.type === 'object';
    const ap = resolved.additionalProperties;
    return {
      asIs: false,
      items: resolved.items,
      struct: isObject && resolved.properties && node.ref !== undefined ? this.structPlan(node.ref, resolved.properties) : undefined,
      mapValues: isObject && ap && typeof ap === 'object' && !resolved.properties ? ap : undefined,
    };
  }

  private structPlan(name: string, props: Readonly<Record<string, SchemaNode>>): StructPlan {
    const fieldCodes = codes()[name] ?? {};
    const members = new Map<string, StructMember>();
    for (const [key, prop] of Object.entries(props)) members.set(key, { prop, code: fieldCodes[key] ?? 'p' });
    const filled: (StructMember & { key: string })[] = [];
    for (const [key, code] of Object.entries(fieldCodes)) {
      const m = members.get(key);
      if (m && (code === 'N' || code === 'z' || code === 's')) filled.push({ key, ...m });
    }
    return { members, filled };
  }

  // With `fill` (of, zero) a value Go would hand over as it is is returned itself, and a struct,
  // map or list is copied only from its first member that differs: a view is only read, and
  // most of an object kapi wrote is in Go's shape already. clean's result becomes the stored
  // object and is changed after, so it is always a copy.
  private value(v: Json, plan: NodePlan, fill: boolean): Json {
    if (plan.asIs) return v;
    if (Array.isArray(v)) {
      if (!plan.items) return v;
      const itemPlan = this.planOf(plan.items);
      let out: Json[] | undefined = fill ? undefined : [];
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        const y = x === null ? null : this.value(x, itemPlan, fill);
        if (out === undefined && y !== x) out = v.slice(0, i);
        out?.push(y);
      }
      return out ?? v;
    }
    if (!isMap(v)) return v;
    if (plan.struct) return this.struct(v, plan.struct, fill);
    if (plan.mapValues) {
      const valuePlan = this.planOf(plan.mapValues);
      let out: JsonMap | undefined = fill ? undefined : {};
      for (const k in v) {
        const x = v[k];
        const y = x !== null ? this.value(x, valuePlan, fill) : fill ? null : undefined;
        if (out === undefined && y !== x) out = membersBefore(v, k);
        if (out !== undefined && y !== undefined) out[k] = y;
      }
      return out ?? v;
    }
    return v;
  }

  private struct(v: JsonMap, plan: StructPlan, fill: boolean): JsonMap {
    let out: JsonMap | undefined = fill ? undefined : {};
    for (const key in v) {
      const member = plan.members.get(key);
      const x = v[key];
      let y: Json | undefined;
      // the Go type has no such member
      if (!member) y = undefined;
      else if (x === null) y = fill ? this.unset(member) : undefined;
      else if (member.code === 'o' && isEmptyValue(x)) y = undefined;
      else y = this.value(x, (member.plan ??= this.planOf(member.prop)), fill);
      if (out === undefined && y !== x) out = membersBefore(v, key);
      if (out !== undefined && y !== undefined) out[key] = y;
    }
    if (!fill) return out!;
    for (const member of plan.filled) {
      // the members of `out` are some of those of `v`
      if (Object.hasOwn(v, member.key)) continue;
      const zero = this.unset(member);
      if (zero === undefined) continue;
      out ??= { ...v };
      out[member.key] = zero;
    }
    return out ?? v;
  }

  /** what an unset member shows as; undefined when it is left out */
  private unset({ code, prop }: StructMember): Json | undefined {
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
        return this.zeroStruct(prop.ref, t.properties);
      }
      default:
        return undefined;
    }
  }

  private zeroStruct(name: string, props: Readonly<Record<string, SchemaNode>>): JsonMap {
    let zero = this.zeroStructs.get(name);
    if (!zero) {
      zero = deepFreeze(this.struct({}, this.structPlan(name, props), true));
      this.zeroStructs.set(name, zero);
    }
    return zero;
  }
}

/** a copy of the members of `v` that come before `key` */
function membersBefore(v: JsonMap, key: string): JsonMap {
  const out: JsonMap = {};
  for (const k in v) {
    if (k === key) break;
    out[k] = v[k];
  }
  return out;
}
