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

/** How to walk the values of one schema node that reaches a quantity, worked out once per node:
 *  only the members that lead to a quantity are visited, so most of an object is never read. */
interface WalkPlan {
  /** the node is a Quantity */
  readonly quantity: boolean;
  /** an object of Quantities (a resource list): rounded up to milli units */
  readonly quantityValues: boolean;
  /** list items that reach a quantity */
  readonly items?: SchemaNode;
  /** the properties that reach a quantity */
  readonly members: readonly (readonly [string, SchemaNode])[];
  /** additionalProperties, when they reach a quantity: then every member of a value is
   *  visited, under its property's schema or this one */
  readonly otherValues?: SchemaNode;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
}

const QUANTITY_PLAN: WalkPlan = { quantity: true, quantityValues: false, members: [] };

class Walker {
  private readonly plans = new Map<SchemaNode, WalkPlan | null>();

  constructor(
    private readonly schemas: SchemaRegistry,
    private readonly memo: Map<string, boolean>,
  ) {}

  /** the plan of `node`; null when nothing below it is a quantity */
  private planOf(node: SchemaNode): WalkPlan | null {
    let plan = this.plans.get(node);
    if (plan === undefined) {
      plan = this.buildPlan(node);
      this.plans.set(node, plan);
    }
    return plan;
  }

  private buildPlan(node: SchemaNode): WalkPlan | null {
    if (node.ref === quantityRef) return QUANTITY_PLAN;
    if (!reachesQuantity(this.schemas, node, this.memo)) return null;
    const r = this.schemas.resolve(node);
    const ap = typeof r.additionalProperties === 'object' ? r.additionalProperties : undefined;
    const reaches = (n: SchemaNode) => reachesQuantity(this.schemas, n, this.memo);
    const members = Object.entries(r.properties ?? {}).filter(([, child]) => reaches(child));
    return {
      quantity: false,
      quantityValues: ap?.ref === quantityRef,
      items: r.items && reaches(r.items) ? r.items : undefined,
      members,
      otherValues: ap && reaches(ap) ? ap : undefined,
      properties: r.properties,
    };
  }

  walk(node: SchemaNode, value: unknown): unknown {
    const plan = this.planOf(node);
    if (plan === null) return value;
    if (plan.quantity) return canonicalQuantity(value);
    if (plan.quantityValues && isObject(value)) {
      for (const k in value) value[k] = canonicalQuantity(value[k], milliScale);
      return value;
    }
    if (Array.isArray(value)) {
      if (plan.items) for (let i = 0; i < value.length; i++) value[i] = this.walk(plan.items, value[i]);
      return value;
    }
    if (!isObject(value)) return value;
    if (plan.otherValues) {
      for (const k in value) {
        const v = value[k];
        if (v !== null && v !== undefined) value[k] = this.walk(plan.properties?.[k] ?? plan.otherValues, v);
      }
      return value;
    }
    for (const [k, child] of plan.members) {
      if (!Object.hasOwn(value, k)) continue;
      const v = value[k];
      if (v !== null && v !== undefined) value[k] = this.walk(child, v);
    }
    return value;
  }
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
  const walker = new Walker(schemas, memo);
  return (obj) => {
    walker.walk(root, obj);
  };
}
