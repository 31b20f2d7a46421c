// Decoding a JSON value as kube-apiserver decodes a request into its Go type: which members
// are unknown or repeated (strict decoding errors, with kube's field paths), which value has
// the wrong type (the error Go's decoder or apimachinery's unstructured converter returns),
// and the value without its unknown members (Go's structs have no place for them).
//
// Two dialects:
//  - `json`: sigs.k8s.io/json's strict decoder (create, update, JSON and merge patch). Strict
//    errors are kept in document order; the first type error is kept and decoding goes on; an
//    error from a type that decodes itself (Quantity, IntOrString, Time) ends decoding.
//  - `unstructured`: runtime.DefaultUnstructuredConverter (strategic merge patch results). The
//    first type error ends decoding; unknown fields come sorted.

import { base64ErrorOffset } from '../registry/core/config.js';
import { DuplicateKeyObject, lastWins } from './field-validation-json.js';
import type { Plan, SchemaUnionPlan, StructPlan } from './field-validation-plan.js';
import { quantityError } from './field-validation-quantity.js';
import { goTimeParseError, RFC3339, RFC3339_MICRO } from './field-validation-time.js';

export type Dialect = 'json' | 'unstructured';

export interface DecodeOptions {
  dialect: Dialect;
  /** `sorted`: members in key order, as Go's encoder writes maps (YAML bodies and patch
   *  results reach kube-apiserver's decoder as such JSON); `document`: as given */
  order: 'document' | 'sorted';
  /** false: report only, leave the value as it is (default true: unknown members go) */
  clean?: boolean;
  /** the value holds DuplicateKeyObjects (from parseKeepingDuplicates) */
  keepsDuplicates?: boolean;
}

export interface DecodeResult {
  /** the value without unknown members (repeated members merged as Go merges them) */
  value: unknown;
  /** `unknown field "spec.foo"`, `duplicate field "data.a"`: in kube's order, at most 100 */
  strict: string[];
  /** the decoding error kube-apiserver reports instead of anything else */
  error?: string;
}

/** the most strict errors the decoder keeps */
const MAX_STRICT_ERRORS = 100;

/** a type error before the path it belongs to is known to the message */
interface TypeMismatch {
  /** `string`, `number`, `number 1.5`, `bool`, `array`, `object` */
  value: string;
  goType: string;
}

class Fatal {
  constructor(readonly text: string) {}
}

function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

function isObject(v: unknown): v is Record<string, unknown> | DuplicateKeyObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const byKey = ([a]: [string, unknown], [b]: [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);

/** how Go's decoder names a JSON value in `cannot unmarshal X` */
function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/** reflect.Kind of an unstructured value, as the converter names it */
function unstructuredKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (Array.isArray(v)) return 'slice';
  return 'map';
}

/** reflect.Kind of a Go type name (named types by their underlying kind) */
function kindOfPlan(plan: Plan): string {
  switch (plan.kind) {
    case 'string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'float':
      return 'float64';
    case 'int':
      return plan.max > 2147483647 ? 'int64' : 'int32';
    default:
      return plan.kind;
  }
}

function typeErrorText(m: TypeMismatch, struct: string, field: string): string {
  if (struct === '' && field === '') return `json: cannot unmarshal ${m.value} into Go value of type ${m.goType}`;
  return `json: cannot unmarshal ${m.value} into Go struct field ${struct}.${field} of type ${m.goType}`;
}

const isFlat = (plan: Plan): boolean =>
  plan.kind === 'string' || plan.kind === 'bool' || plan.kind === 'int' || plan.kind === 'float' || plan.kind === 'bytes';

/**
 * One decoding. Where it is, is kept as Go's decoder keeps it, in stacks that grow and shrink
 * as it descends (strings are only built for errors):
 *  - strict errors: `spec.containers[0].ports[1].name`, map keys included;
 *  - type errors: the innermost struct (`ContainerPort`) and its field names from the root
 *    (`spec.containers.ports.name`), without indices or map keys.
 */
class Decoder {
  readonly strict: string[] = [];
  private readonly seenStrict = new Set<string>();
  /** the first type error (json dialect): decoding goes on, this is what is reported */
  firstError?: { mismatch?: TypeMismatch; text: string };
  /** strict path: member names, and numbers for list indices */
  private readonly path: (string | number)[] = [];
  private readonly fields: string[] = [];
  private structName = '';

  constructor(
    readonly dialect: Dialect,
    readonly sorted: boolean,
    readonly clean: boolean,
    readonly keepsDuplicates: boolean,
    /** inside a type that decodes itself with a non-strict decoder (JSONSchemaPropsOrBool) */
    readonly lenient = false,
  ) {}

  private pathText(last: string): string {
    let s = '';
    for (const p of this.path) s = typeof p === 'number' ? `${s}[${p}]` : s === '' ? p : `${s}.${p}`;
    return s === '' ? last : `${s}.${last}`;
  }

  private strictError(kind: 'unknown field' | 'duplicate field', key: string): void {
    if (this.lenient || this.strict.length >= MAX_STRICT_ERRORS) return;
    const text = `${kind} ${JSON.stringify(this.pathText(key))}`;
    if (this.seenStrict.has(text)) return;
    this.seenStrict.add(text);
    this.strict.push(text);
  }

  private typeError(m: TypeMismatch): string {
    return typeErrorText(m, this.structName, this.fields.join('.'));
  }

  /** a type error: kept (first one wins) by the JSON decoder, fatal for the converter */
  private mismatch(v: unknown, plan: Plan, value = jsonKind(v)): void {
    if (this.dialect === 'unstructured') throw new Fatal(this.converterError(v, plan));
    if (this.firstError) return;
    const m = { value, goType: plan.goType };
    this.firstError = { mismatch: m, text: this.typeError(m) };
  }

  private saveText(text: string): void {
    if (this.dialect === 'unstructured') throw new Fatal(text);
    this.firstError ??= { text };
  }

  /** runtime.DefaultUnstructuredConverter's error for a value of the wrong kind */
  private converterError(v: unknown, plan: Plan): string {
    const st = unstructuredKind(v);
    switch (plan.kind) {
      case 'struct':
        return `cannot restore struct from: ${st}`;
      case 'map':
        return `cannot restore map from ${st}`;
      case 'slice':
      case 'bytes':
        return `cannot restore slice from ${st}`;
      default: {
        // an integer converts to a string type in Go (and fails there); nothing else converts
        const dt = kindOfPlan(plan);
        if (st === 'int64' && dt === 'string') return `cannot convert int64 to ${plan.goType}`;
        if (st === 'float64' && (dt === 'int32' || dt === 'int64')) return `cannot convert float64 to ${plan.goType}`;
        return `unrecognized type: ${dt}`;
      }
    }
  }

  /** decodes `v` as `plan`; `into` is what an earlier repeat of the same member left */
  value(v: unknown, plan: Plan, into?: unknown): unknown {
    if (v === null) return null;
    switch (plan.kind) {
      case 'struct':
        return this.struct(v, plan, into);
      case 'map':
        return this.map(v, plan.elem, plan, into);
      case 'slice':
        return this.slice(v, plan.elem, plan, into);
      case 'string':
        if (typeof v !== 'string') this.mismatch(v, plan);
        return v;
      case 'bool':
        if (typeof v !== 'boolean') this.mismatch(v, plan);
        return v;
      case 'float':
        if (typeof v !== 'number') this.mismatch(v, plan);
        return v;
      case 'int':
        if (typeof v !== 'number') this.mismatch(v, plan);
        else if (!Number.isInteger(v) || v < plan.min || v > plan.max) {
          if (this.dialect === 'json') this.mismatch(v, plan, `number ${String(v)}`);
          else if (!Number.isInteger(v)) this.mismatch(v, plan);
        }
        return v;
      case 'bytes':
        return this.bytes(v, plan);
      case 'quantity':
        return this.quantity(v);
      case 'intOrString':
        return this.intOrString(v);
      case 'time':
      case 'microTime':
        return this.time(v, plan.kind === 'time' ? RFC3339 : RFC3339_MICRO);
      case 'any':
        return this.keepsDuplicates ? lastWins(v) : v;
      case 'schemaOrBool':
      case 'schemaOrArray':
      case 'schemaOrStringArray':
        return this.schemaUnion(v, plan);
    }
  }

  private struct(v: unknown, plan: StructPlan, into?: unknown): unknown {
    if (!isObject(v)) {
      this.mismatch(v, plan);
      return v;
    }
    // a plain object is cleaned in place; repeated members build a fresh one
    const inPlace = !(v instanceof DuplicateKeyObject) && into === undefined;
    if (inPlace && !this.sorted) {
      this.structInPlace(v as Record<string, unknown>, plan);
      return v;
    }
    const out = inPlace ? (v as Record<string, unknown>) : isObject(into) && !(into instanceof DuplicateKeyObject) ? into : {};
    const entries = v instanceof DuplicateKeyObject ? v.entries : Object.entries(v);
    if (this.sorted) entries.sort(byKey);
    const seen = new Set<string>();
    const outer = this.structName;
    for (const [k, x] of entries) {
      const field = plan.fields.get(k);
      if (!field) {
        if (plan.preserveUnknown) {
          if (!inPlace) setOwn(out, k, this.keepsDuplicates ? lastWins(x) : x);
          continue;
        }
        this.strictError('unknown field', k);
        if (inPlace && this.clean) delete out[k];
        continue;
      }
      const again = seen.has(k);
      if (again) this.strictError('duplicate field', k);
      seen.add(k);
      const previous = again || !inPlace ? (Object.hasOwn(out, k) ? out[k] : undefined) : undefined;
      this.path.push(k);
      this.fields.push(k);
      this.structName = plan.goName;
      const decoded = this.value(x, field, previous);
      this.path.pop();
      this.fields.pop();
      this.structName = outer;
      setOwn(out, k, decoded);
    }
    return out;
  }

  /** the common case: a plain object, members in their order, cleaned where it is */
  private structInPlace(o: Record<string, unknown>, plan: StructPlan): void {
    const outer = this.structName;
    for (const k in o) {
      const field = plan.fields.get(k);
      if (!field) {
        if (plan.preserveUnknown) continue;
        this.strictError('unknown field', k);
        if (this.clean) delete o[k];
        continue;
      }
      const x = o[k];
      if (x === null) continue;
      if (isFlat(field)) {
        // scalars need no place on the stacks unless they are wrong
        if (!this.scalarFits(x, field)) {
          this.path.push(k);
          this.fields.push(k);
          this.structName = plan.goName;
          this.value(x, field);
          this.path.pop();
          this.fields.pop();
          this.structName = outer;
        }
        continue;
      }
      this.path.push(k);
      this.fields.push(k);
      this.structName = plan.goName;
      const decoded = this.value(x, field);
      this.path.pop();
      this.fields.pop();
      this.structName = outer;
      if (decoded !== x) o[k] = decoded;
    }
  }

  /** true when a scalar value needs no further look */
  private scalarFits(x: unknown, plan: Plan): boolean {
    switch (plan.kind) {
      case 'string':
        return typeof x === 'string';
      case 'bool':
        return typeof x === 'boolean';
      case 'float':
        return typeof x === 'number';
      case 'int':
        return typeof x === 'number' && Number.isInteger(x) && x >= plan.min && x <= plan.max;
      default:
        return false;
    }
  }

  private map(v: unknown, elem: Plan, plan: Plan, into?: unknown): unknown {
    if (!isObject(v)) {
      this.mismatch(v, plan);
      return v;
    }
    const inPlace = !(v instanceof DuplicateKeyObject) && into === undefined;
    if (inPlace && isFlat(elem)) {
      // the common case (labels, annotations, data): only the values' types to check
      const o = v as Record<string, unknown>;
      for (const k in o) {
        const x = o[k];
        if (x === null || this.scalarFits(x, elem)) continue;
        this.path.push(k);
        this.value(x, elem);
        this.path.pop();
      }
      return v;
    }
    const out = inPlace ? (v as Record<string, unknown>) : isObject(into) && !(into instanceof DuplicateKeyObject) ? into : {};
    const entries = v instanceof DuplicateKeyObject ? v.entries : Object.entries(v);
    if (this.sorted) entries.sort(byKey);
    const seen = new Set<string>();
    for (const [k, x] of entries) {
      const again = seen.has(k);
      if (again) this.strictError('duplicate field', k);
      seen.add(k);
      // Go decodes each map value into a fresh element: no merging across repeats
      this.path.push(k);
      setOwn(out, k, this.value(x, elem));
      this.path.pop();
    }
    return out;
  }

  private slice(v: unknown, elem: Plan, plan: Plan, into?: unknown): unknown {
    if (!Array.isArray(v)) {
      this.mismatch(v, plan);
      return v;
    }
    const old = Array.isArray(into) ? into : undefined;
    const flat = isFlat(elem);
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x === null || (flat && this.scalarFits(x, elem))) continue;
      // Go decodes a repeated list over the earlier one's elements
      const previous = old && i < old.length ? old[i] : undefined;
      this.path.push(i);
      const decoded = this.value(x, elem, previous);
      this.path.pop();
      if (decoded !== x) v[i] = decoded;
    }
    return v;
  }

  private bytes(v: unknown, plan: Plan): unknown {
    if (typeof v === 'string') {
      const bad = base64ErrorOffset(v);
      if (bad >= 0) {
        const text = `illegal base64 data at input byte ${bad}`;
        this.saveText(this.dialect === 'unstructured' ? `error decoding from json: ${text}` : text);
      }
      return v;
    }
    if (Array.isArray(v) && this.dialect === 'json') {
      // a JSON array decodes into []byte element by element
      const uint8: Plan = { kind: 'int', goType: 'uint8', min: 0, max: 255 };
      for (const x of v) {
        if (typeof x !== 'number') this.mismatch(x, uint8);
        else if (!Number.isInteger(x) || x < 0 || x > 255) this.mismatch(x, uint8, `number ${String(x)}`);
      }
      return v;
    }
    this.mismatch(v, plan);
    return v;
  }

  /** Quantity.UnmarshalJSON: a string or a number that ParseQuantity accepts */
  private quantity(v: unknown): unknown {
    let text: string;
    if (typeof v === 'string') text = v.trim();
    else if (typeof v === 'number') text = String(v);
    else text = typeof v === 'boolean' ? String(v) : '{';
    const err = quantityError(text);
    if (err) throw new Fatal(err);
    return v;
  }

  /** the text of an error a type that decodes itself gets from encoding/json: the outer JSON
   *  decoder adds where it happened, the converter does not */
  private ownDecoderError(m: TypeMismatch): Fatal {
    return new Fatal(this.dialect === 'json' ? this.typeError(m) : typeErrorText(m, '', ''));
  }

  /** IntOrString.UnmarshalJSON: a string, else what decodes into an int32 */
  private intOrString(v: unknown): unknown {
    if (typeof v === 'string') return v;
    let value: string | undefined;
    if (typeof v === 'number') {
      if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) value = `number ${String(v)}`;
    } else {
      value = jsonKind(v);
    }
    if (value !== undefined) throw this.ownDecoderError({ value, goType: 'int32' });
    return v;
  }

  /** metav1.Time / MicroTime.UnmarshalJSON: a string that time.Parse accepts */
  private time(v: unknown, layout: string): unknown {
    if (typeof v !== 'string') throw this.ownDecoderError({ value: jsonKind(v), goType: 'string' });
    const err = goTimeParseError(layout, v);
    if (err) throw new Fatal(err);
    return v;
  }

  /** JSONSchemaPropsOr*: an object is a schema decoded without strictness (its unknown members
   *  are dropped silently); the other forms as each type takes them */
  private schemaUnion(v: unknown, plan: SchemaUnionPlan): unknown {
    const sub = (x: unknown, p: Plan): unknown => {
      const inner = new Decoder(this.dialect, this.sorted, this.clean, this.keepsDuplicates, true);
      const out = inner.value(x, p);
      const e = inner.firstError;
      if (e) {
        // a type error inside gets the outer decoder's place; others stay as they are
        throw new Fatal(e.mismatch && this.dialect === 'json' ? this.typeError(e.mismatch) : e.text);
      }
      return out;
    };
    if (isObject(v)) return sub(v, plan.schema);
    if (Array.isArray(v)) return plan.array ? sub(v, plan.array) : v;
    if (plan.kind === 'schemaOrBool' && typeof v !== 'boolean') throw new Fatal('boolean or JSON schema expected');
    return v;
  }
}

/** Decodes `value` as `plan`. The value is cleaned in place where it can be; use the returned
 *  `value`. */
export function decodeAs(plan: Plan, value: unknown, opts: DecodeOptions): DecodeResult {
  const d = new Decoder(opts.dialect, opts.order === 'sorted', opts.clean !== false, opts.keepsDuplicates === true);
  let out: unknown;
  try {
    out = d.value(value, plan);
  } catch (err) {
    if (err instanceof Fatal) return { value, strict: [], error: err.text };
    throw err;
  }
  if (d.firstError) return { value: out, strict: [], error: d.firstError.text };
  const strict = opts.dialect === 'unstructured' ? [...d.strict].sort() : d.strict;
  return { value: out, strict };
}
