// Values of a structural schema as CRD rules see them: typed by the schema (durations,
// timestamps, bytes, ints), property names escaped so that `self.foo__dash__bar` reads
// `foo-bar`, set and map lists marked so that `==` and `+` follow their list type. The types themselves are declared by server/cel/schema-types.ts, where the rules
// are type-checked at write time.

import { escapeProperty } from '../cel/escaping.js';
import { markMapList, markSetList } from '../cel/keyed-lists.js';
import { isMapSchema as isMap, propertiesOf, type CelSchema } from '../cel/schema-types.js';
import { durationFromNanos } from '../cel/values.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Go's time.ParseDuration, as kube parses `format: duration` strings */
function parseDuration(s: string): unknown {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(s);
  if (!m && s !== '0') return undefined;
  if (s === '0') return durationFromNanos(0n);
  const unit: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  let total = 0;
  for (const part of s.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += Number(part[1]) * unit[part[2]!]!;
  const nanos = BigInt(Math.round(total));
  return durationFromNanos(s.startsWith('-') ? -nanos : nanos);
}

function stringValue(v: string, format: string | undefined): unknown {
  switch (format) {
    case 'duration':
      return parseDuration(v) ?? v;
    case 'date':
    case 'date-time': {
      const t = new Date(v);
      return Number.isNaN(t.getTime()) ? v : t;
    }
    case 'byte':
      return new Uint8Array(Buffer.from(v, 'base64'));
    default:
      return v;
  }
}

/** a JSON value as the rule sees it: typed by the schema, property names escaped */
export function celValue(v: unknown, s: CelSchema | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    if (s?.type === 'number') return v;
    return Number.isInteger(v) ? BigInt(v) : v;
  }
  if (typeof v === 'string') return s && !s['x-kubernetes-int-or-string'] ? stringValue(v, s.format) : v;
  if (Array.isArray(v)) {
    const list = v.map((x) => celValue(x, s?.items));
    // set and map lists compare and add by their own rules (keyed-lists.ts)
    if (s?.['x-kubernetes-list-type'] === 'set') return markSetList(list);
    if (s?.['x-kubernetes-list-type'] === 'map')
      return markMapList(
        list,
        (s['x-kubernetes-list-map-keys'] ?? []).map((k) => escapeProperty(k) ?? k),
      );
    return list;
  }
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    if (s && !isMap(s)) {
      const props = propertiesOf(s);
      for (const [k, x] of Object.entries(v)) {
        const ps = props[k];
        const key = ps ? escapeProperty(k) : k;
        if (key !== undefined) out[key] = celValue(x, ps);
      }
      return out;
    }
    const item = s && isObj(s.additionalProperties) ? (s.additionalProperties as CelSchema) : undefined;
    for (const [k, x] of Object.entries(v)) out[k] = celValue(x, item);
    return out;
  }
  return v;
}
