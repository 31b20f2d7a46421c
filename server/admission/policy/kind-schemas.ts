// The schemas of the kinds kapi serves, as ValidatingAdmissionPolicy type checking reads
// them: the built-in kinds' OpenAPI definitions with every reference resolved in place, as
// kube's schema resolver populates them (a definition met again below itself, a recursive
// type, becomes a bare object, as kube's does); a custom resource's from its CRD's version,
// with the full ObjectMeta its published OpenAPI document has.

import { loadSchemas, type SchemaNode, type SchemaRegistry } from '../../apis/schema.js';
import type { CelSchema } from '../../cel/schema-types.js';
import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceResolver } from '../../registry/rest.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** what type checking needs to know about the served kinds */
export interface KindSchemas {
  /** the kind served at a group/version/resource, or undefined when none is */
  kindFor(group: string, version: string, resource: string): GroupVersionKind | undefined;
  /** the schema of a kind, or undefined when kapi has none (kube's ErrSchemaNotFound) */
  schemaFor(gvk: GroupVersionKind): CelSchema | undefined;
}

/** kube's OpenAPI v3 definition of a Quantity is a oneOf without a type, which its CEL types
 *  leave out: so do kapi's (the field, and the maps and lists of quantities) */
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

function toCelSchema(registry: SchemaRegistry, node: SchemaNode, visiting: Set<string>): CelSchema {
  if (node.ref === QUANTITY) return {};
  if (node.ref !== undefined) {
    if (visiting.has(node.ref)) return { type: 'object' };
    const target = registry.definition(node.ref);
    if (!target) return {};
    visiting.add(node.ref);
    try {
      return toCelSchema(registry, target, visiting);
    } finally {
      visiting.delete(node.ref);
    }
  }
  const out: CelSchema = {};
  if (node.type) out.type = node.type;
  if (node.format && node.format !== 'int-or-string') out.format = node.format;
  if (node.intOrString) out['x-kubernetes-int-or-string'] = true;
  if (node.preserveUnknownFields) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (node.embeddedResource) out['x-kubernetes-embedded-resource'] = true;
  if (node.listType) out['x-kubernetes-list-type'] = node.listType;
  if (node.listMapKeys) out['x-kubernetes-list-map-keys'] = [...node.listMapKeys];
  if (node.required) out.required = [...node.required];
  if (node.properties) {
    out.properties = {};
    for (const [name, p] of Object.entries(node.properties)) out.properties[name] = toCelSchema(registry, p, visiting);
  }
  if (node.items) out.items = toCelSchema(registry, node.items, visiting);
  if (node.additionalProperties !== undefined) {
    out.additionalProperties =
      typeof node.additionalProperties === 'boolean'
        ? node.additionalProperties
        : toCelSchema(registry, node.additionalProperties, visiting);
  }
  return out;
}

/** the CRD versions' schemas, when the caller follows CRDs */
export type CustomResourceSchemas = (gvk: GroupVersionKind) => CelSchema | undefined;

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** the schema of a custom resource kind from the CRDs (stored objects), or undefined */
export function customResourceSchema(crds: readonly KubeObject[], gvk: GroupVersionKind): CelSchema | undefined {
  for (const crd of crds) {
    const spec = crd['spec'] as
      | { group?: string; names?: { kind?: string }; versions?: { name?: string; schema?: { openAPIV3Schema?: CelSchema } }[] }
      | undefined;
    if (spec?.group !== gvk.group || spec.names?.kind !== gvk.kind) continue;
    return spec.versions?.find((v) => v.name === gvk.version)?.schema?.openAPIV3Schema;
  }
  return undefined;
}

/** the kinds of `resolver` with the built-in definitions of schemas.json, and the custom
 *  resources' schemas when `custom` is given */
export function servedKindSchemas(resolver: ResourceResolver, custom?: CustomResourceSchemas): KindSchemas {
  const registry = loadSchemas();
  const cache = new Map<string, CelSchema | undefined>();
  let objectMeta: CelSchema | undefined;
  return {
    kindFor(group, version, resource) {
      const info = resolver.lookup(group, version, resource)?.info;
      return info ? { group: info.group, version: info.version, kind: info.kind } : undefined;
    },
    schemaFor(gvk) {
      const crd = custom?.(gvk);
      if (crd) {
        objectMeta ??= toCelSchema(registry, { ref: OBJECT_META }, new Set());
        return {
          ...crd,
          properties: { ...(crd.properties ?? {}), apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: objectMeta },
        };
      }
      const key = `${gvk.group}/${gvk.version}/${gvk.kind}`;
      if (!cache.has(key)) {
        const name = registry.definitionNameFor(gvk.group, gvk.version, gvk.kind);
        const def = name === undefined ? undefined : registry.definition(name);
        cache.set(key, def && name !== undefined ? toCelSchema(registry, { ref: name }, new Set()) : undefined);
      }
      return cache.get(key);
    },
  };
}
