// Decoding plans: what kube-apiserver's typed JSON decoder expects at each place of an object,
// compiled once per definition from the schema registry. A plan knows the Go type names the
// decoder prints in its errors (`v1.Protocol`, `[]v1.Container`, `int32`), taken from the
// schema and, where the schema cannot tell (named string types, named maps), from
// generated/go-types.json (scripts/generate-go-types.mjs).

import { readGeneratedJson } from '../apis/assets.js';
import { loadSchemas, type SchemaNode, type SchemaRegistry } from '../apis/schema.js';

export interface StructPlan {
  kind: 'struct';
  /** the Go struct's name, e.g. `DeploymentSpec` (errors say `Go struct field DeploymentSpec.spec.replicas`) */
  goName: string;
  goType: string;
  /** JSON field name -> plan; every field of the struct, inline embeddings included */
  fields: Map<string, Plan>;
  /** x-kubernetes-preserve-unknown-fields: unknown fields are kept, not reported */
  preserveUnknown: boolean;
}

export interface MapPlan {
  kind: 'map';
  goType: string;
  elem: Plan;
}

export interface SlicePlan {
  kind: 'slice';
  goType: string;
  elem: Plan;
}

export interface ScalarPlan {
  kind: 'string' | 'bool' | 'float' | 'bytes';
  goType: string;
}

export interface IntPlan {
  kind: 'int';
  goType: string;
  min: number;
  max: number;
}

/** Go types that decode themselves (UnmarshalJSON): their errors are their own */
export interface CustomPlan {
  kind: 'quantity' | 'intOrString' | 'time' | 'microTime' | 'any';
  goType: string;
}

/** apiextensions' JSONSchemaPropsOr{Bool,Array,StringArray}: a schema object decoded without
 *  strictness, or their other form */
export interface SchemaUnionPlan {
  kind: 'schemaOrBool' | 'schemaOrArray' | 'schemaOrStringArray';
  goType: string;
  schema: Plan;
  /** the array form: []JSONSchemaProps or []string */
  array?: Plan;
}

export type Plan = StructPlan | MapPlan | SlicePlan | ScalarPlan | IntPlan | CustomPlan | SchemaUnionPlan;

interface GoTypes {
  fields: Record<string, Record<string, string>>;
  named: Record<string, string>;
}

const APIEXT = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

/** definitions whose Go types decode themselves */
const CUSTOM: Record<string, CustomPlan['kind']> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': 'quantity',
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': 'intOrString',
  [`${META}Time`]: 'time',
  [`${META}MicroTime`]: 'microTime',
  'io.k8s.apimachinery.pkg.runtime.RawExtension': 'any',
  [`${META}FieldsV1`]: 'any',
  [`${META}Patch`]: 'any',
  [`${APIEXT}JSON`]: 'any',
};

const UNIONS: Record<string, SchemaUnionPlan['kind']> = {
  [`${APIEXT}JSONSchemaPropsOrBool`]: 'schemaOrBool',
  [`${APIEXT}JSONSchemaPropsOrArray`]: 'schemaOrArray',
  [`${APIEXT}JSONSchemaPropsOrStringArray`]: 'schemaOrStringArray',
};

const INT32 = { min: -2147483648, max: 2147483647 };
// 2^63 is the first float64 past int64's range
// biome-ignore lint/correctness/noPrecisionLoss: Go's int64 bounds, compared as float64 the way its decoder compares them
const INT64 = { min: -9223372036854775808, max: 9223372036854775807 };

/** `io.k8s.api.apps.v1.DeploymentSpec` -> `v1.DeploymentSpec`, as reflect prints the Go type */
export function goTypeOfDefinition(name: string): string {
  const dot = name.lastIndexOf('.');
  const prefix = name.slice(0, dot);
  return `${prefix.slice(prefix.lastIndexOf('.') + 1)}.${name.slice(dot + 1)}`;
}

/** the element type of a Go slice or map type (`[]v1.Capability` -> `v1.Capability`) */
function elemGoType(goType: string, named: Record<string, string>): string | undefined {
  const t = named[goType] ?? goType;
  if (t.startsWith('[]')) return t.slice(2);
  if (t.startsWith('map[')) {
    let depth = 0;
    for (let i = 3; i < t.length; i++) {
      if (t[i] === '[') depth++;
      else if (t[i] === ']' && --depth === 0) return t.slice(i + 1);
    }
  }
  return undefined;
}

export class PlanCompiler {
  private readonly structs = new Map<string, Plan>();
  private readonly goTypes: GoTypes;

  constructor(
    private readonly schemas: SchemaRegistry = loadSchemas(),
    goTypes?: GoTypes,
  ) {
    this.goTypes = goTypes ?? (readGeneratedJson('go-types.json') as GoTypes);
  }

  /** the plan of a top-level kind; undefined for kinds without a schema (custom resources) */
  forKind(group: string, version: string, kind: string): Plan | undefined {
    const name = this.schemas.definitionNameFor(group, version, kind);
    return name === undefined ? undefined : this.definition(name);
  }

  /** the plan of a named definition (compiled once; recursive definitions share the object) */
  definition(name: string): Plan {
    const done = this.structs.get(name);
    if (done) return done;
    const custom = CUSTOM[name];
    if (custom) {
      const plan: CustomPlan = { kind: custom, goType: goTypeOfDefinition(name) };
      this.structs.set(name, plan);
      return plan;
    }
    const union = UNIONS[name];
    if (union) {
      const plan: SchemaUnionPlan = { kind: union, goType: goTypeOfDefinition(name), schema: { kind: 'any', goType: 'interface {}' } };
      this.structs.set(name, plan);
      plan.schema = this.definition(`${APIEXT}JSONSchemaProps`);
      if (union === 'schemaOrArray') plan.array = { kind: 'slice', goType: `[]v1.JSONSchemaProps`, elem: plan.schema };
      if (union === 'schemaOrStringArray') plan.array = { kind: 'slice', goType: '[]string', elem: { kind: 'string', goType: 'string' } };
      return plan;
    }
    const def = this.schemas.definition(name);
    if (!def) {
      const plan: CustomPlan = { kind: 'any', goType: 'interface {}' };
      this.structs.set(name, plan);
      return plan;
    }
    const goType = goTypeOfDefinition(name);
    if (def.type !== 'object' || def.additionalProperties) {
      // a definition that is not a struct (none among the built-in kinds today)
      const plan = this.node(def, goType);
      this.structs.set(name, plan);
      return plan;
    }
    const plan: StructPlan = {
      kind: 'struct',
      goName: name.slice(name.lastIndexOf('.') + 1),
      goType,
      fields: new Map(),
      preserveUnknown: def.preserveUnknownFields === true,
    };
    this.structs.set(name, plan);
    const overrides = this.goTypes.fields[name] ?? {};
    for (const [field, node] of Object.entries(def.properties ?? {})) {
      plan.fields.set(field, this.node(node, overrides[field]));
    }
    return plan;
  }

  /** the plan of an inline schema node; `goType` when the Go type is known better than the schema says */
  private node(node: SchemaNode, goType?: string): Plan {
    if (node.ref !== undefined) {
      const plan = this.definition(node.ref);
      // a named type over a struct keeps the struct's plan; only scalars and composites rename
      if (goType === undefined || plan.kind === 'struct') return plan;
      return { ...plan, goType } as Plan;
    }
    if (node.intOrString) return { kind: 'intOrString', goType: 'intstr.IntOrString' };
    switch (node.type) {
      case 'string':
        if (node.format === 'byte') return { kind: 'bytes', goType: '[]uint8' };
        return { kind: 'string', goType: goType ?? 'string' };
      case 'boolean':
        return { kind: 'bool', goType: goType ?? 'bool' };
      case 'integer':
        return node.format === 'int32'
          ? { kind: 'int', goType: goType ?? 'int32', ...INT32 }
          : { kind: 'int', goType: goType ?? 'int64', ...INT64 };
      case 'number':
        return { kind: 'float', goType: goType ?? 'float64' };
      case 'array': {
        const elemType = goType === undefined ? undefined : elemGoType(goType, this.goTypes.named);
        const elem = node.items ? this.node(node.items, elemType) : { kind: 'any' as const, goType: 'interface {}' };
        return { kind: 'slice', goType: goType ?? `[]${elem.goType}`, elem };
      }
      case 'object': {
        const ap = node.additionalProperties;
        if (ap && typeof ap === 'object') {
          const elemType = goType === undefined ? undefined : elemGoType(goType, this.goTypes.named);
          const elem = this.node(ap, elemType);
          return { kind: 'map', goType: goType ?? `map[string]${elem.goType}`, elem };
        }
        if (node.properties || node.embeddedResource) {
          // an inline struct (custom resource schemas): its own plan, named after nothing
          const fields = new Map<string, Plan>();
          for (const [field, child] of Object.entries(node.properties ?? {})) fields.set(field, this.node(child));
          if (node.embeddedResource) {
            // x-kubernetes-embedded-resource: an object with its own type meta and ObjectMeta
            if (!fields.has('apiVersion')) fields.set('apiVersion', { kind: 'string', goType: 'string' });
            if (!fields.has('kind')) fields.set('kind', { kind: 'string', goType: 'string' });
            if (!fields.has('metadata')) fields.set('metadata', this.definition(`${META}ObjectMeta`));
          }
          return {
            kind: 'struct',
            goName: '',
            goType: goType ?? 'map[string]interface {}',
            fields,
            preserveUnknown: node.preserveUnknownFields === true,
          };
        }
        return { kind: 'any', goType: goType ?? 'map[string]interface {}' };
      }
      default:
        return { kind: 'any', goType: goType ?? 'interface {}' };
    }
  }
}

let shared: PlanCompiler | undefined;

/** the process-wide compiler over the built-in schemas */
export function plans(): PlanCompiler {
  shared ??= new PlanCompiler();
  return shared;
}
