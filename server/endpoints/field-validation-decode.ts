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

/** where a value sits, for the two kinds of paths kube prints */
interface Where {
  /** strict errors: `spec.containers[0].ports[1].name`, map keys included */
  path: string;
  /** type errors: the innermost struct (`ContainerPort`) and its field names from the root
   *  (`spec.containers.ports.name`), without indices or map keys */
  struct: string;
  field: string;
}

class Fatal {
  constructor(readonly text: string) {}
}

const ROOT: Where = { path: '', struct: '', field: '' };

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

function isObject(v: unknown): v is Record<string, unknown> | DuplicateKeyObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function entriesOf(v: Record<string, unknown> | DuplicateKeyObject, sorted: boolean): [string, unknown][] {
  const entries = v instanceof DuplicateKeyObject ? v.entries : Object.entries(v);
  if (!sorted) return entries;
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

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

function typeErrorText(m: TypeMismatch, at: Where): string {
  if (at.struct === '' && at.field === '') return `json: cannot unmarshal ${m.value} into Go value of type ${m.goType}`;
  return `json: cannot unmarshal ${m.value} into Go struct field ${at.struct}.${at.field} of type ${m.goType}`;
}

class Decoder {
  readonly strict: string[] = [];
  private readonly seenStrict = new Set<string>();
  /** the first type error (json dialect): decoding goes on, this is what is reported */
  firstError?: { mismatch?: TypeMismatch; text: string };

  constructor(
    readonly dialect: Dialect,
    readonly sorted: boolean,
    readonly clean: boolean,
    /** inside a type that decodes itself with a non-strict decoder (JSONSchemaPropsOrBool) */
    readonly lenient = false,
  ) {}

  private strictError(kind: 'unknown field' | 'duplicate field', path: string): void {
    if (this.lenient) return;
    const text = `${kind} ${JSON.stringify(path)}`;
    if (this.strict.length >= MAX_STRICT_ERRORS || this.seenStrict.has(text)) return;
    this.seenStrict.add(text);
    this.strict.push(text);
  }

  /** a type error: kept (first one wins) by the JSON decoder, fatal for the converter */
  private mismatch(v: unknown, plan: Plan, at: Where, value = jsonKind(v)): void {
    if (this.dialect === 'unstructured') throw new Fatal(this.converterError(v, plan));
    const m = { value, goType: plan.goType };
    this.firstError ??= { mismatch: m, text: typeErrorText(m, at) };
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
  value(v: unknown, plan: Plan, at: Where, into?: unknown): unknown {
    if (v === null) return null;
    switch (plan.kind) {
      case 'struct':
        return this.struct(v, plan, at, into);
      case 'map':
        return this.map(v, plan.elem, plan, at, into);
      case 'slice':
        return this.slice(v, plan.elem, plan, at, into);
      case 'string':
        if (typeof v !== 'string') this.mismatch(v, plan, at);
        return v;
      case 'bool':
        if (typeof v !== 'boolean') this.mismatch(v, plan, at);
        return v;
      case 'float':
        if (typeof v !== 'number') this.mismatch(v, plan, at);
        return v;
      case 'int':
        if (typeof v !== 'number') this.mismatch(v, plan, at);
        else if (!Number.isInteger(v) || v < plan.min || v > plan.max) {
          if (this.dialect === 'json') this.mismatch(v, plan, at, `number ${String(v)}`);
          else if (!Number.isInteger(v)) this.mismatch(v, plan, at);
        }
        return v;
      case 'bytes':
        return this.bytes(v, plan, at);
      case 'quantity':
        return this.quantity(v);
      case 'intOrString':
        return this.intOrString(v, at);
      case 'time':
      case 'microTime':
        return this.time(v, plan.kind === 'time' ? RFC3339 : RFC3339_MICRO, at);
      case 'any':
        return lastWins(v);
      case 'schemaOrBool':
      case 'schemaOrArray':
      case 'schemaOrStringArray':
        return this.schemaUnion(v, plan, at);
    }
  }

  private struct(v: unknown, plan: StructPlan, at: Where, into?: unknown): unknown {
    if (!isObject(v)) {
      this.mismatch(v, plan, at);
      return v;
    }
    // a plain object is cleaned in place; repeated members build a fresh one
    const inPlace = !(v instanceof DuplicateKeyObject) && into === undefined;
    const out = inPlace ? v : isObject(into) && !(into instanceof DuplicateKeyObject) ? into : {};
    const seen = new Set<string>();
    for (const [k, x] of entriesOf(v, this.sorted)) {
      const field = plan.fields.get(k);
      if (!field) {
        if (plan.preserveUnknown) {
          if (!inPlace) setOwn(out, k, lastWins(x));
          continue;
        }
        this.strictError('unknown field', join(at.path, k));
        if (inPlace && this.clean) delete out[k];
        continue;
      }
      const again = seen.has(k);
      if (again) this.strictError('duplicate field', join(at.path, k));
      seen.add(k);
      const previous = again || !inPlace ? (Object.hasOwn(out, k) ? out[k] : undefined) : undefined;
      const decoded = this.value(x, field, { path: join(at.path, k), struct: plan.goName, field: join(at.field, k) }, previous);
      setOwn(out, k, decoded);
    }
    return out;
  }

  private map(v: unknown, elem: Plan, plan: Plan, at: Where, into?: unknown): unknown {
    if (!isObject(v)) {
      this.mismatch(v, plan, at);
      return v;
    }
    const inPlace = !(v instanceof DuplicateKeyObject) && into === undefined;
    if (inPlace && this.isFlat(elem)) {
      // the common case (labels, annotations, data): only the values' types to check
      for (const [k, x] of Object.entries(v)) if (x !== null) this.value(x, elem, { ...at, path: join(at.path, k) });
      return v;
    }
    const out = inPlace ? v : isObject(into) && !(into instanceof DuplicateKeyObject) ? into : {};
    const seen = new Set<string>();
    for (const [k, x] of entriesOf(v, this.sorted)) {
      const again = seen.has(k);
      if (again) this.strictError('duplicate field', join(at.path, k));
      seen.add(k);
      // Go decodes each map value into a fresh element: no merging across repeats
      setOwn(out, k, this.value(x, elem, { ...at, path: join(at.path, k) }));
    }
    return out;
  }

  private isFlat(plan: Plan): boolean {
    return plan.kind === 'string' || plan.kind === 'bool' || plan.kind === 'int' || plan.kind === 'float' || plan.kind === 'bytes';
  }

  private slice(v: unknown, elem: Plan, plan: Plan, at: Where, into?: unknown): unknown {
    if (!Array.isArray(v)) {
      this.mismatch(v, plan, at);
      return v;
    }
    const old = Array.isArray(into) ? into : undefined;
    for (let i = 0; i < v.length; i++) {
      // Go decodes a repeated list over the earlier one's elements
      const previous = old && i < old.length ? old[i] : undefined;
      v[i] = this.value(v[i], elem, { ...at, path: `${at.path}[${i}]` }, previous);
    }
    return v;
  }

  private bytes(v: unknown, plan: Plan, at: Where): unknown {
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
      for (const x of v) {
        if (typeof x !== 'number') this.mismatch(x, { kind: 'int', goType: 'uint8', min: 0, max: 255 }, at);
        else if (!Number.isInteger(x) || x < 0 || x > 255) this.mismatch(x, { kind: 'int', goType: 'uint8', min: 0, max: 255 }, at, `number ${String(x)}`);
      }
      return v;
    }
    this.mismatch(v, plan, at);
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

  /** IntOrString.UnmarshalJSON: a string, else what decodes into an int32 */
  private intOrString(v: unknown, at: Where): unknown {
    if (typeof v === 'string') return v;
    let value: string | undefined;
    if (typeof v === 'number') {
      if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) value = `number ${String(v)}`;
    } else {
      value = jsonKind(v);
    }
    if (value !== undefined) {
      const m = { value, goType: 'int32' };
      // its own decoder's error; the outer JSON decoder adds where it happened
      throw new Fatal(this.dialect === 'json' ? typeErrorText(m, at) : typeErrorText(m, ROOT));
    }
    return v;
  }

  /** metav1.Time / MicroTime.UnmarshalJSON: a string that time.Parse accepts */
  private time(v: unknown, layout: string, at: Where): unknown {
    if (typeof v !== 'string') {
      const m = { value: jsonKind(v), goType: 'string' };
      throw new Fatal(this.dialect === 'json' ? typeErrorText(m, at) : typeErrorText(m, ROOT));
    }
    const err = goTimeParseError(layout, v);
    if (err) throw new Fatal(err);
    return v;
  }

  /** JSONSchemaPropsOr*: an object is a schema decoded without strictness (its unknown members
   *  are dropped silently); the other forms as each type takes them */
  private schemaUnion(v: unknown, plan: SchemaUnionPlan, at: Where): unknown {
    const sub = (x: unknown, p: Plan): unknown => {
      const inner = new Decoder(this.dialect, this.sorted, this.clean, true);
      const out = inner.value(x, p, ROOT);
      const e = inner.firstError;
      if (e) {
        // a type error inside gets the outer decoder's place; others stay as they are
        throw new Fatal(e.mismatch && this.dialect === 'json' ? typeErrorText(e.mismatch, at) : e.text);
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
  const d = new Decoder(opts.dialect, opts.order === 'sorted', opts.clean !== false);
  let out: unknown;
  try {
    out = d.value(value, plan, ROOT);
  } catch (err) {
    if (err instanceof Fatal) return { value, strict: [], error: err.text };
    throw err;
  }
  if (d.firstError) return { value: out, strict: [], error: d.firstError.text };
  const strict = opts.dialect === 'unstructured' ? [...d.strict].sort() : d.strict;
  return { value: out, strict };
}
