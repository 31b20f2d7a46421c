// The types server-side apply merges by, read off the schema registry the way kube-apiserver
// converts its OpenAPI document for structured-merge-diff:
//  - lists: `x-kubernetes-list-type` atomic, set or map (with `x-kubernetes-list-map-keys`);
//    without it, `patchStrategy: merge` means a map keyed by the patch merge key (a set when
//    there is no key); anything else is atomic;
//  - objects: `x-kubernetes-map-type` atomic or granular (the default); an object with
//    properties knows its fields, other fields are not declared unless additionalProperties
//    (or x-kubernetes-preserve-unknown-fields) gives their type;
//  - Quantity and IntOrString are scalars of any kind; a schema without structure (RawExtension,
//    JSON) is "deduced": scalars are leaves, lists atomic, maps granular, all the way down.
// Custom resources without markers get the same deduced treatment.

import type { SchemaNode, SchemaRegistry } from '../apis/schema.js';
import type { Json } from './value.js';

export type ScalarKind = 'string' | 'numeric' | 'boolean' | 'untyped';

export interface ListAtom {
  /** atomic lists are replaced whole; the others (sets and map-lists) merge by item */
  readonly atomic: boolean;
  /** map-list keys; empty for atomic lists and sets */
  readonly keys: readonly string[];
  readonly element: TypeRef;
}

export interface MapAtom {
  readonly atomic: boolean;
  /** declared fields (struct members) */
  readonly fields: ReadonlyMap<string, TypeRef>;
  /** the type of other members; undefined when other members are not allowed */
  readonly element?: TypeRef;
  /** defaults of fields used as map-list keys (`protocol: TCP` of ports) */
  readonly defaults?: ReadonlyMap<string, Json>;
}

/** what a value of a type may be; a deduced type allows all three */
export interface Atom {
  readonly scalar?: ScalarKind;
  readonly list?: ListAtom;
  readonly map?: MapAtom;
}

/** a type, resolved lazily (types are recursive) */
export interface TypeRef {
  atom(): Atom;
  /** the definition name, when the type is one */
  readonly name?: string;
}

const untypedAtomic: TypeRef = {
  atom: () => untypedAtomicAtom,
  name: '__untyped_atomic_',
};
const untypedAtomicAtom: Atom = {
  scalar: 'untyped',
  list: { atomic: true, keys: [], element: untypedAtomic },
  map: { atomic: true, fields: new Map(), element: untypedAtomic },
};

/** the atom of an OpenAPI scalar type (string, integer, number, boolean), or undefined */
export function scalarAtomOf(type: string | undefined): Atom | undefined {
  switch (type) {
    case 'string':
      return { scalar: 'string' };
    case 'integer':
    case 'number':
      return { scalar: 'numeric' };
    case 'boolean':
      return { scalar: 'boolean' };
    default:
      return undefined;
  }
}

export const deducedType: TypeRef = {
  atom: () => deducedAtom,
  name: '__untyped_deduced_',
};
const deducedAtom: Atom = {
  scalar: 'untyped',
  list: { atomic: true, keys: [], element: untypedAtomic },
  map: { atomic: false, fields: new Map(), element: deducedType },
};

/** definitions whose values are scalars of more than one JSON type */
const UNTYPED_SCALARS = new Set(['io.k8s.apimachinery.pkg.api.resource.Quantity', 'io.k8s.apimachinery.pkg.util.intstr.IntOrString']);

/** defaults of map-list key fields, which the OpenAPI document kube-apiserver merges with has */
const KEY_DEFAULTS: Record<string, Record<string, Json>> = {
  'io.k8s.api.core.v1.ContainerPort': { protocol: 'TCP' },
  'io.k8s.api.core.v1.ServicePort': { protocol: 'TCP' },
};

/** the types of kinds the registry does not know (custom resources, from their CRD's schema) */
export type CustomKindTypes = (model: TypeModel, group: string, version: string, kind: string) => TypeRef | undefined;
let customKindTypes: CustomKindTypes | undefined;
export function setCustomKindTypes(fn: CustomKindTypes | undefined): void {
  customKindTypes = fn;
}

/** Types of one schema registry, each built once. */
export class TypeModel {
  private readonly byNode = new Map<SchemaNode, Map<string, TypeRef>>();

  constructor(private readonly schemas: SchemaRegistry) {}

  /** the type of a top-level kind; undefined when the registry does not know it */
  typeOfKind(group: string, version: string, kind: string): TypeRef | undefined {
    const name = this.schemas.definitionNameFor(group, version, kind);
    if (name === undefined) return customKindTypes?.(this, group, version, kind);
    const def = this.schemas.definition(name);
    return def ? this.typeOf({ ref: name }) : undefined;
  }

  /** the type a schema node (a property, with its markers) stands for */
  typeOf(node: SchemaNode): TypeRef {
    const resolved = this.schemas.resolve(node);
    // markers on a property override those of the definition it refers to
    const mapType = node.mapType ?? resolved.mapType;
    const variant = `${mapType ?? ''}|${node.listType ?? ''}|${node.patchStrategy ?? ''}|${node.patchMergeKey ?? ''}|${(node.listMapKeys ?? []).join(',')}`;
    let cache = this.byNode.get(resolved);
    if (!cache) {
      cache = new Map();
      this.byNode.set(resolved, cache);
    }
    let ref = cache.get(variant);
    if (ref) return ref;
    let atom: Atom | undefined;
    const name = node.ref;
    ref = {
      name,
      atom: () => (atom ??= this.build(node, resolved, mapType)),
    };
    cache.set(variant, ref);
    return ref;
  }

  private build(node: SchemaNode, resolved: SchemaNode, mapType: string | undefined): Atom {
    const name = node.ref;
    if (name !== undefined && UNTYPED_SCALARS.has(name)) return { scalar: 'untyped' };
    if (resolved.intOrString) return { scalar: 'untyped' };
    const scalar = scalarAtomOf(resolved.type);
    if (scalar) return scalar;
    switch (resolved.type) {
      case 'array':
        return { list: this.listAtom(node, resolved) };
      case 'object':
        // an object without structure (RawExtension, FieldsV1) takes any value
        if (resolved.properties === undefined && resolved.additionalProperties === undefined) {
          return mapType === 'atomic' ? untypedAtomicAtom : deducedAtom;
        }
        return { map: this.mapAtom(resolved, mapType, name) };
      default:
        return deducedAtom;
    }
  }

  private listAtom(node: SchemaNode, resolved: SchemaNode): ListAtom {
    const element = resolved.items ? this.typeOf(resolved.items) : untypedAtomic;
    const listType = node.listType ?? resolved.listType;
    if (listType !== undefined) {
      if (listType === 'atomic') return { atomic: true, keys: [], element };
      if (listType === 'set') return { atomic: false, keys: [], element };
      return { atomic: false, keys: [...(node.listMapKeys ?? resolved.listMapKeys ?? [])], element };
    }
    const strategy = node.patchStrategy ?? resolved.patchStrategy;
    if (strategy === 'merge' || strategy === 'merge,retainKeys') {
      const key = node.patchMergeKey ?? resolved.patchMergeKey;
      return { atomic: false, keys: key ? [key] : [], element };
    }
    return { atomic: true, keys: [], element };
  }

  private mapAtom(resolved: SchemaNode, mapType: string | undefined, name: string | undefined): MapAtom {
    const fields = new Map<string, TypeRef>();
    for (const [k, v] of Object.entries(resolved.properties ?? {})) fields.set(k, this.typeOf(v));
    let element: TypeRef | undefined;
    const ap = resolved.additionalProperties;
    if (ap && typeof ap === 'object') element = this.typeOf(ap);
    else if (ap === true || resolved.preserveUnknownFields || fields.size === 0) element = deducedType;
    const defaults = name !== undefined && KEY_DEFAULTS[name] ? new Map(Object.entries(KEY_DEFAULTS[name])) : undefined;
    return { atomic: mapType === 'atomic', fields, element, defaults };
  }
}

/** the type of a member of a map value: its declared field, else the map's element type */
export function memberType(map: MapAtom, key: string): TypeRef | undefined {
  return map.fields.get(key) ?? map.element;
}
