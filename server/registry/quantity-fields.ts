// Rewrites every resource.Quantity field of a built-in object in its canonical text, as
// kube-apiserver's decode/encode round trip does (`cpu: 0.5` is stored and served as `500m`);
// quantities in resource lists (maps of quantities) are first rounded up to milli units, as
// v1's SetDefaults_ResourceList does. Which fields are quantities comes from the schema.

import type { SchemaNode, SchemaRegistry } from '../apis/schema.js';
import { isObject } from './object.js';
import { canonicalQuantity } from '../machinery/quantity.js';

const quantityRef = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** the answers for schema nodes without a ref (inline schemas), asked on every object walked */
const reachesByNode = new WeakMap<SchemaNode, boolean>();
/** definitions whose answer is being worked out: a `false` found meanwhile may only be so
 *  because a definition it reaches is provisionally `false` (a recursive one) */
let definitionsInProgress = 0;

/** whether any quantity can be reached below `node` (memoized per definition, and per inline
 *  node once its answer is final) */
function reachesQuantity(schemas: SchemaRegistry, node: SchemaNode, memo: Map<string, boolean>): boolean {
  if (node.ref === quantityRef) return true;
  if (node.ref === undefined) {
    const known = reachesByNode.get(node);
    if (known !== undefined) return known;
    const found = reachesInline(schemas, node, memo);
    if (found || definitionsInProgress === 0) reachesByNode.set(node, found);
    return found;
  }
  const known = memo.get(node.ref);
  if (known !== undefined) return known;
  memo.set(node.ref, false);
  const def = schemas.definition(node.ref);
  definitionsInProgress++;
  let found: boolean;
  try {
    found = def ? reachesQuantity(schemas, def, memo) : false;
  } finally {
    definitionsInProgress--;
  }
  memo.set(node.ref, found);
  return found;
}

function reachesInline(schemas: SchemaRegistry, node: SchemaNode, memo: Map<string, boolean>): boolean {
  for (const child of Object.values(node.properties ?? {})) if (reachesQuantity(schemas, child, memo)) return true;
  if (node.items && reachesQuantity(schemas, node.items, memo)) return true;
  if (typeof node.additionalProperties === 'object' && reachesQuantity(schemas, node.additionalProperties, memo)) return true;
  return false;
}

const milliScale = -3;

function walk(schemas: SchemaRegistry, node: SchemaNode, value: unknown, memo: Map<string, boolean>): unknown {
  if (node.ref === quantityRef) return canonicalQuantity(value);
  if (!reachesQuantity(schemas, node, memo)) return value;
  const r = schemas.resolve(node);
  if (typeof r.additionalProperties === 'object' && r.additionalProperties.ref === quantityRef && isObject(value)) {
    for (const [k, v] of Object.entries(value)) value[k] = canonicalQuantity(v, milliScale);
    return value;
  }
  if (Array.isArray(value)) {
    if (!r.items) return value;
    for (let i = 0; i < value.length; i++) value[i] = walk(schemas, r.items, value[i], memo);
    return value;
  }
  if (!isObject(value)) return value;
  for (const k in value) {
    const v = value[k];
    const child = r.properties?.[k] ?? (typeof r.additionalProperties === 'object' ? r.additionalProperties : undefined);
    if (child && v !== null && v !== undefined) value[k] = walk(schemas, child, v, memo);
  }
  return value;
}

export type QuantityCanonicalizer = (obj: Record<string, unknown>) => void;

/** a function canonicalizing the quantities of objects of one kind, or undefined when the kind
 *  has none */
export function quantityCanonicalizerFor(
  schemas: SchemaRegistry,
  group: string,
  version: string,
  kind: string,
): QuantityCanonicalizer | undefined {
  const root = schemas.schemaFor(group, version, kind);
  if (!root) return undefined;
  const memo = new Map<string, boolean>();
  if (!reachesQuantity(schemas, root, memo)) return undefined;
  return (obj) => {
    walk(schemas, root, obj, memo);
  };
}
