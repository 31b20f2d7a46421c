// --feature-gates as kube-apiserver 1.33 reads it: `[kube:]Name=bool` pairs, repeated uses
// adding up, checked against the gates it registers (known-1.33.ts) with its messages. Every
// behaviour of kapi that kube puts behind a gate asks a FeatureGates value, never the flag.

import { KNOWN_GATES, type GateSpec, type Stage } from './known-1.33.js';

export type { Stage } from './known-1.33.js';

export class FeatureGateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGateError';
  }
}

export interface GateState {
  readonly name: string;
  readonly stage: Stage;
  readonly enabled: boolean;
}

export interface ParsedFeatureGates {
  readonly gates: FeatureGates;
  /** what kube logs as warnings for the gates set (deprecated and GA gates) */
  readonly warnings: readonly string[];
}

/** strconv.ParseBool's spellings */
function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/** splits the flag's values into the kube component's pairs (kube's "component:" prefix) */
function kubePairs(values: readonly string[]): string[] {
  const byComponent = new Map<string, string[]>();
  for (const value of values) {
    for (const pair of value.split(',')) {
      if (pair === '') continue;
      const colon = pair.indexOf(':');
      const component = colon < 0 ? '' : pair.slice(0, colon).trim();
      const rest = (colon < 0 ? pair : pair.slice(colon + 1)).trim();
      byComponent.set(component, [...(byComponent.get(component) ?? []), rest]);
    }
  }
  if (byComponent.has('') && byComponent.has('kube')) {
    throw new FeatureGateError('set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use');
  }
  for (const component of byComponent.keys()) {
    if (component !== '' && component !== 'kube') throw new FeatureGateError(`component not registered: ${component}`);
  }
  return [...byComponent.values()].flat();
}

function requestedValues(pairs: readonly string[]): Map<string, boolean> {
  const requested = new Map<string, boolean>();
  for (const pair of pairs.join(',').split(',')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    if (eq < 0) throw new FeatureGateError(`missing bool value for ${name}`);
    const text = pair.slice(eq + 1).trim();
    const value = parseGoBool(text);
    if (value === undefined) {
      throw new FeatureGateError(
        `invalid value of ${name}=${text}, err: strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`,
      );
    }
    requested.set(name, value);
  }
  return requested;
}

/** the toggles that set every gate of their stage the flag leaves unset */
const STAGE_TOGGLES: ReadonlyMap<string, Stage> = new Map([
  ['AllAlpha', 'ALPHA'],
  ['AllBeta', 'BETA'],
]);

export class FeatureGates {
  private constructor(private readonly values: ReadonlyMap<string, boolean>) {}

  /** every gate at its 1.33 default */
  static defaults(): FeatureGates {
    return FeatureGates.parse([]).gates;
  }

  /** the --feature-gates values as given; throws FeatureGateError with kube's message */
  static parse(flagValues: readonly string[]): ParsedFeatureGates {
    const requested = requestedValues(kubePairs(flagValues));
    const errors: string[] = [];
    const warnings: string[] = [];
    for (const [name, value] of requested) {
      const spec = KNOWN_GATES.get(name);
      // kube stops at the first unknown gate and reports it alone
      if (spec === undefined) throw new FeatureGateError(`unrecognized feature gate: ${name}`);
      if (spec.locked && spec.default !== value) {
        errors.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
        continue;
      }
      if (STAGE_TOGGLES.has(name)) continue;
      if (spec.stage === 'DEPRECATED')
        warnings.push(`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`);
      else if (spec.stage === 'GA') warnings.push(`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`);
    }
    // utilerrors.Aggregate: one error alone, several in brackets
    if (errors.length === 1) throw new FeatureGateError(errors[0]!);
    if (errors.length > 1) throw new FeatureGateError(`[${errors.join(', ')}]`);

    const values = new Map<string, boolean>();
    for (const [name, spec] of KNOWN_GATES) values.set(name, spec.default);
    for (const [toggle, stage] of STAGE_TOGGLES) {
      const on = requested.get(toggle);
      if (on === undefined) continue;
      for (const [name, spec] of KNOWN_GATES) {
        if (spec.stage === stage && !STAGE_TOGGLES.has(name) && !requested.has(name) && !spec.locked) values.set(name, on);
      }
    }
    for (const [name, value] of requested) values.set(name, value);
    return { gates: new FeatureGates(values), warnings };
  }

  /** a gate's value; naming a gate kube 1.33 does not have is a bug in kapi */
  enabled(name: string): boolean {
    const value = this.values.get(name);
    if (value === undefined) throw new Error(`feature gate ${name} is not a kube-apiserver 1.33 gate`);
    return value;
  }

  /** every gate, for kubernetes_feature_enabled */
  states(): GateState[] {
    return [...KNOWN_GATES].map(([name, spec]: [string, GateSpec]) => ({ name, stage: spec.stage, enabled: this.values.get(name)! }));
  }

  /** name to value, for the parts that take a plain map (admission plugins) */
  toRecord(): Record<string, boolean> {
    return Object.fromEntries(this.values);
  }
}
