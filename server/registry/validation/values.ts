// Value rules shared by the kinds' validation (apimachinery's util/validation and the common
// helpers of pkg/apis/core/validation): ranges, ports, percents, IPs, paths, env names, and
// the Go renderings (`%#v`) of the few structured values kube-apiserver puts in messages.

import { asArray, asObject, isObject } from '../object.js';
import { fieldErrors, goQuote, type FieldError, type RenderedValue } from '../../machinery/validation/field-error.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, regexError } from '../../machinery/validation/names.js';

export const isNegativeErrorMsg = 'must be greater than or equal to 0';
export const isNotPositiveErrorMsg = 'must be greater than zero';
export const fieldImmutableErrorMsg = 'field is immutable';

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** the number at v, or undefined when unset (Go's nil pointer) */
export function optNum(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

export function nonNegative(value: unknown, path: string): FieldError[] {
  const n = num(value);
  return n < 0 ? [fieldErrors.invalid(path, n, isNegativeErrorMsg)] : [];
}

/** the value shown for an immutable field that changed: Go prints the new value */
export function immutableField(now: unknown, before: unknown, path: string, shown?: FieldError['badValue']): FieldError[] {
  if (JSON.stringify(now ?? null) === JSON.stringify(before ?? null)) return [];
  return [fieldErrors.invalid(path, shown ?? goValue(now), fieldImmutableErrorMsg)];
}

/** a JSON value as field errors print it for plain values (strings quoted, numbers bare) */
export function goValue(v: unknown): FieldError['badValue'] {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return v as object;
}

// ---- names and formats ----

export function dnsLabel(value: string, path: string): FieldError[] {
  return isDNS1123Label(value).map((m) => fieldErrors.invalid(path, value, m));
}

export function dnsSubdomain(value: string, path: string): FieldError[] {
  return isDNS1123Subdomain(value).map((m) => fieldErrors.invalid(path, value, m));
}

export function qualifiedName(value: string, path: string): FieldError[] {
  return isQualifiedName(value).map((m) => fieldErrors.invalid(path, value, m));
}

export function labelValue(value: string, path: string): FieldError[] {
  return isValidLabelValue(value).map((m) => fieldErrors.invalid(path, value, m));
}

export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/** an IANA service name (a port name) */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isValidPercent(v: string): string[] {
  if (/^[0-9]+%$/.test(v)) return [];
  return [regexError("a valid percent string must be a numeric string followed by an ending '%'", '[0-9]+%', '1%', '93%')];
}

export function isRelaxedEnvVarName(v: string): string[] {
  const errs: string[] = [];
  if (v.length === 0) errs.push('environment variable name must be non-empty');
  if (v.length !== 0 && !/^[ -<>-~]+$/.test(v)) {
    errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
  }
  return errs;
}

export function isHTTPHeaderName(v: string): string[] {
  if (/^[-A-Za-z0-9]+$/.test(v)) return [];
  return [regexError("a valid HTTP header must consist of alphanumeric characters or '-'", '[-A-Za-z0-9]+', 'X-Header-Name')];
}

function isIPv4(s: string): boolean {
  const parts = s.split('.');
  // Go's sloppy parser also takes leading zeros
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

function isIPv6(s: string): boolean {
  if (!/^[0-9A-Fa-f:.]+$/.test(s) || !s.includes(':')) return false;
  let body = s;
  const groupsNeeded = 8;
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return false;
    body = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = body.split('::');
  if (halves.length > 2) return false;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const left = groups(halves[0] ?? '');
  const right = halves.length === 2 ? groups(halves[1] ?? '') : [];
  const all = [...left, ...right];
  if (!all.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  return halves.length === 2 ? all.length < groupsNeeded : all.length === groupsNeeded;
}

export function isIP(s: string): boolean {
  return isIPv4(s) || isIPv6(s);
}

export function validIP(value: string, path: string): FieldError[] {
  if (isIP(value)) return [];
  return [fieldErrors.invalid(path, value, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];
}

export function validatePathNoBacksteps(p: string, path: string): FieldError[] {
  return p.split('/').includes('..') ? [fieldErrors.invalid(path, p, "must not contain '..'")] : [];
}

export function validateLocalDescendingPath(p: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (p.startsWith('/')) errs.push(fieldErrors.invalid(path, p, 'must be a relative path'));
  errs.push(...validatePathNoBacksteps(p, path));
  return errs;
}

export function validateLocalNonReservedPath(p: string, path: string): FieldError[] {
  const errs = validateLocalDescendingPath(p, path);
  if (p.startsWith('..') && !p.startsWith('../')) errs.push(fieldErrors.invalid(path, p, "must not start with '..'"));
  return errs;
}

/** kube's warning for workload names that are not DNS labels (they become pod host names) */
export function workloadNameWarnings(name: string, usedFor = 'Pod names and hostnames'): string[] {
  const msgs = isDNS1123Label(name);
  if (!msgs.length) return [];
  return [
    `metadata.name: this is used in ${usedFor}, which can result in surprising behavior; a DNS label is recommended: [${msgs.join(' ')}]`,
  ];
}

// ---- Go renderings ----

/** `%#v` of a map[string]string; absent is the nil map */
export function goStringMap(m: unknown): RenderedValue {
  if (!isObject(m)) return { rendered: 'map[string]string(nil)' };
  const entries = Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { rendered: `map[string]string{${entries.map(([k, v]) => `${goQuote(k)}:${goQuote(String(v))}`).join(', ')}}` };
}

/** `%#v` of a []string; absent is the nil slice */
export function goStringSlice(v: unknown): RenderedValue {
  if (!Array.isArray(v)) return { rendered: '[]string(nil)' };
  return { rendered: `[]string{${v.map((x) => goQuote(String(x))).join(', ')}}` };
}

/** `%#v` of an intstr.IntOrString */
export function goIntOrString(v: unknown): RenderedValue {
  if (typeof v === 'string') return { rendered: `intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(v)}}` };
  return { rendered: `intstr.IntOrString{Type:0, IntVal:${typeof v === 'number' ? v : 0}, StrVal:""}` };
}

/** `%#v` of a metav1.LabelSelector value (field errors dereference pointers) */
export function goLabelSelector(sel: unknown): RenderedValue {
  const s = asObject(sel);
  const ml = goStringMap(s.matchLabels).rendered;
  const me = Array.isArray(s.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${asArray(s.matchExpressions)
        .map((e) => {
          const r = asObject(e);
          return `v1.LabelSelectorRequirement{Key:${goQuote(str(r.key))}, Operator:${goQuote(str(r.operator))}, Values:${goStringSlice(r.values).rendered}}`;
        })
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return { rendered: `v1.LabelSelector{MatchLabels:${ml}, MatchExpressions:${me}}` };
}

/** the int value of an IntOrString percent or number (kube's getIntOrPercentValue) */
export function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && isValidPercent(v).length === 0) return Number(v.slice(0, -1));
  return 0;
}

export function validatePositiveIntOrPercent(v: unknown, path: string): FieldError[] {
  if (typeof v === 'string') return isValidPercent(v).map((m) => fieldErrors.invalid(path, goIntOrString(v), m));
  if (typeof v === 'number') return nonNegative(v, path);
  return [];
}

export function isNotMoreThan100Percent(v: unknown, path: string): FieldError[] {
  if (typeof v !== 'string' || isValidPercent(v).length) return [];
  return Number(v.slice(0, -1)) > 100 ? [fieldErrors.invalid(path, goIntOrString(v), 'must not be greater than 100%')] : [];
}
