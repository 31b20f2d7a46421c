// The schema registry: the structure of every built-in type (generated/schemas.json, read off
// the Kubernetes 1.33 OpenAPI document without its prose), for field validation, strategic
// merge patch, server-side apply and the OpenAPI documents.

import { readGeneratedJson } from './assets.js';
import type { GroupVersionKind } from './types.js';

export type ListType = 'atomic' | 'set' | 'map';
export type MapType = 'atomic' | 'granular';

export interface UnionMarker {
  discriminator?: string;
  'fields-to-discriminateBy'?: Record<string, string>;
}

/** One schema node. A node with `ref` stands for the named definition. A node without `type`
 *  accepts any JSON value (apiextensions JSON); an `object` without properties or
 *  additionalProperties accepts any object (RawExtension, Patch, FieldsV1). */
export interface SchemaNode {
  /** definition name, e.g. `io.k8s.api.core.v1.PodSpec` */
  ref?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  /** int32, int64, double, byte, date-time, int-or-string */
  format?: string;
  properties?: Readonly<Record<string, SchemaNode>>;
  required?: readonly string[];
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  /** x-kubernetes-group-version-kind (definitions of top-level kinds) */
  gvk?: readonly GroupVersionKind[];
  listType?: ListType;
  listMapKeys?: readonly string[];
  mapType?: MapType;
  patchMergeKey?: string;
  /** `merge`, `replace`, `retainKeys` or `merge,retainKeys` */
  patchStrategy?: string;
  /** IntOrString: an integer or a string */
  intOrString?: boolean;
  preserveUnknownFields?: boolean;
  embeddedResource?: boolean;
  unions?: readonly UnionMarker[];
}

/** The compact form stored in schemas.json (see scripts/generate-schemas.mjs). */
interface CompactNode {
  ref?: string;
  t?: SchemaNode['type'];
  f?: string;
  p?: Record<string, CompactNode>;
  r?: string[];
  i?: CompactNode;
  ap?: CompactNode | boolean;
  gvk?: GroupVersionKind[];
  lt?: ListType;
  lk?: string[];
  mt?: MapType;
  pmk?: string;
  ps?: string;
  ios?: boolean;
  puf?: boolean;
  er?: boolean;
  un?: UnionMarker[];
}

function expand(c: CompactNode): SchemaNode {
  const n: SchemaNode = {};
  if (c.ref !== undefined) n.ref = c.ref;
  if (c.t !== undefined) n.type = c.t;
  if (c.f !== undefined) n.format = c.f;
  if (c.p) {
    const props: Record<string, SchemaNode> = {};
    for (const [k, v] of Object.entries(c.p)) props[k] = expand(v);
    n.properties = Object.freeze(props);
  }
  if (c.r) n.required = Object.freeze([...c.r]);
  if (c.i) n.items = expand(c.i);
  if (c.ap !== undefined) n.additionalProperties = typeof c.ap === 'boolean' ? c.ap : expand(c.ap);
  if (c.gvk) n.gvk = Object.freeze(c.gvk.map((g) => Object.freeze({ group: g.group, version: g.version, kind: g.kind })));
  if (c.lt !== undefined) n.listType = c.lt;
  if (c.lk) n.listMapKeys = Object.freeze([...c.lk]);
  if (c.mt !== undefined) n.mapType = c.mt;
  if (c.pmk !== undefined) n.patchMergeKey = c.pmk;
  if (c.ps !== undefined) n.patchStrategy = c.ps;
  if (c.ios !== undefined) n.intOrString = c.ios;
  if (c.puf !== undefined) n.preserveUnknownFields = c.puf;
  if (c.er !== undefined) n.embeddedResource = c.er;
  if (c.un) n.unions = Object.freeze(c.un.map((u) => Object.freeze({ ...u })));
  return Object.freeze(n);
}

export interface SchemaRegistry {
  /** every definition name, sorted */
  names(): string[];
  definition(name: string): SchemaNode | undefined;
  /** the definition name of a top-level kind, e.g. (apps, v1, Deployment) -> io.k8s.api.apps.v1.Deployment */
  definitionNameFor(group: string, version: string, kind: string): string | undefined;
  /** the definition of a top-level kind */
  schemaFor(group: string, version: string, kind: string): SchemaNode | undefined;
  /** follows `ref` until a node with structure is reached */
  resolve(node: SchemaNode): SchemaNode;
  /** the (resolved) schema of property `name` of an object node */
  field(node: SchemaNode, name: string): SchemaNode | undefined;
  /** the (resolved) schema of the elements of an array node or the values of a map node */
  elements(node: SchemaNode): SchemaNode | undefined;
  /** follows a field path (`['spec', 'template', 'spec', 'containers', '*', 'ports']`, where `*`
   *  steps into list elements or map values) */
  at(node: SchemaNode, path: readonly string[]): SchemaNode | undefined;
  /** definition names reachable from the given ones through refs, the given ones included */
  closure(names: Iterable<string>): Set<string>;
}

let cached: SchemaRegistry | undefined;

/** The registry over generated/schemas.json (read once per process). */
export function loadSchemas(): SchemaRegistry {
  if (cached) return cached;
  const raw = readGeneratedJson('schemas.json') as Record<string, CompactNode>;
  const defs = new Map<string, SchemaNode>();
  for (const [name, node] of Object.entries(raw)) defs.set(name, expand(node));
  const byGVK = new Map<string, string>();
  for (const [name, node] of defs) {
    // meta types (DeleteOptions, WatchEvent, ...) name every group version; only single-kind
    // definitions are resources
    if (node.gvk?.length !== 1) continue;
    const [g] = node.gvk;
    if (g) byGVK.set(`${g.group}/${g.version}/${g.kind}`, name);
  }
  const names = [...defs.keys()].sort();

  const resolve = (node: SchemaNode): SchemaNode => {
    let current = node;
    for (let depth = 0; current.ref !== undefined; depth++) {
      const next = defs.get(current.ref);
      if (!next || depth > 32) return current;
      current = next;
    }
    return current;
  };
  const field = (node: SchemaNode, name: string): SchemaNode | undefined => {
    const props = resolve(node).properties;
    const child = props && Object.hasOwn(props, name) ? props[name] : undefined;
    return child && resolve(child);
  };
  const elements = (node: SchemaNode): SchemaNode | undefined => {
    const r = resolve(node);
    if (r.items) return resolve(r.items);
    if (r.additionalProperties && typeof r.additionalProperties === 'object') return resolve(r.additionalProperties);
    return undefined;
  };
  const references = (node: SchemaNode, out: string[]): void => {
    if (node.ref !== undefined) out.push(node.ref);
    for (const child of Object.values(node.properties ?? {})) references(child, out);
    if (node.items) references(node.items, out);
    if (node.additionalProperties && typeof node.additionalProperties === 'object') references(node.additionalProperties, out);
  };

  cached = {
    names: () => names.slice(),
    definition: (name) => defs.get(name),
    definitionNameFor: (group, version, kind) => byGVK.get(`${group}/${version}/${kind}`),
    schemaFor: (group, version, kind) => {
      const name = byGVK.get(`${group}/${version}/${kind}`);
      return name === undefined ? undefined : defs.get(name);
    },
    resolve,
    field,
    elements,
    at: (node, path) => {
      let current: SchemaNode | undefined = resolve(node);
      for (const step of path) {
        if (!current) return undefined;
        current = step === '*' ? elements(current) : field(current, step);
      }
      return current;
    },
    closure: (start) => {
      const seen = new Set<string>();
      const queue = [...start];
      while (queue.length > 0) {
        const name = queue.pop() as string;
        if (seen.has(name)) continue;
        const def = defs.get(name);
        if (!def) continue;
        seen.add(name);
        const refs: string[] = [];
        references(def, refs);
        queue.push(...refs);
      }
      return seen;
    },
  };
  return cached;
}
