// Query strings with every option kube reads, each malformed, huge or contradicting another.

import type { Prng } from './prng.js';

const BAD_VALUES = [
  '',
  'x',
  '-1',
  '1e99',
  '99999999999999999999',
  '0x10',
  ' 1',
  '1.5',
  'true',
  'All,All',
  '%00',
  '%ff',
  '%',
  '%%',
  '%2',
  '\u00e9',
];

function selector(rng: Prng, kind: 'label' | 'field'): string {
  const key =
    kind === 'field'
      ? rng.pick(['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase', 'type', 'x.y'])
      : rng.pick(['app', 'a/b', 'x.io/y', '-bad', 'a'.repeat(64), '']);
  switch (rng.int(0, 7)) {
    case 0:
      return Array.from({ length: rng.size(5000) + 1 }, (_v, i) => `${key}=${i}`).join(',');
    case 1:
      return `${key} in (${Array.from({ length: rng.size(5000) + 1 }, (_v, i) => `v${i}`).join(',')})`;
    case 2:
      return '('.repeat(rng.size(20_000)) + key + ')'.repeat(rng.size(100));
    case 3:
      return `${key}${rng.pick(['==', '!=', '=', ' notin ', ' in ', '!', '<', '>', '=='])}${rng.pick(['x', '', '()', '(a,', 'a b', 'x'.repeat(rng.size(100_000)), '\\', '\\,', 'a\\=b'])}`;
    case 4:
      return rng.string(rng.size(2000), '!=(),\\ ab.-_/~%');
    case 5:
      return `${key}=${'a'.repeat(rng.size(200_000))}`;
    case 6:
      return `!${key},${key},${key} notin (a),${key} in ()`;
    default:
      return `${key}=x,,${key}=y`;
  }
}

function continueToken(rng: Prng): string {
  const json = rng.pick([
    '{"v":"meta.k8s.io/v1","rv":1,"start":"a"}',
    '{"v":"meta.k8s.io/v1","rv":-5,"start":"../../"}',
    '{"v":"meta.k8s.io/v1","rv":99999999999999999999,"start":"\\u0000"}',
    '{"v":"meta.k8s.io/v2","rv":1,"start":"a"}',
    '{"v":"meta.k8s.io/v1","rv":"1","start":1}',
    '{"v":"meta.k8s.io/v1"}',
    `{"v":"meta.k8s.io/v1","rv":1,"start":"${'a'.repeat(rng.size(100_000))}"}`,
    '['.repeat(rng.size(20_000)),
    'null',
  ]);
  const encoded = Buffer.from(json).toString(rng.pick(['base64', 'base64url'] as const));
  return rng.pick([encoded, encoded.slice(0, -3), `${encoded}!!`, rng.string(rng.size(500), 'ABCDEFabcdef0123456789+/=-_'), '']);
}

/** one option with a hostile value */
function option(rng: Prng): [string, string] {
  const name = rng.pick([
    'dryRun',
    'fieldValidation',
    'fieldManager',
    'force',
    'propagationPolicy',
    'gracePeriodSeconds',
    'resourceVersion',
    'resourceVersionMatch',
    'limit',
    'continue',
    'labelSelector',
    'fieldSelector',
    'timeoutSeconds',
    'watch',
    'sendInitialEvents',
    'allowWatchBookmarks',
    'pretty',
    'orphanDependents',
    'timeout',
    'export',
    'exact',
    'includeObject',
  ]);
  const pick = (...values: string[]): string => (rng.bool(0.3) ? rng.pick(BAD_VALUES) : rng.pick(values));
  switch (name) {
    case 'dryRun':
      return [name, pick('All', 'all', 'None', 'All,x', 'true', '')];
    case 'fieldValidation':
      return [name, pick('Strict', 'Warn', 'Ignore', 'strict', 'STRICT', 'Other')];
    case 'fieldManager':
      return [name, pick('m', 'x'.repeat(129), 'a\u0001b', 'tab\tx', '\u00e9\u00e9', 'x'.repeat(rng.size(100_000)))];
    case 'force':
      return [name, pick('true', 'false', 'yes', '2')];
    case 'propagationPolicy':
      return [name, pick('Orphan', 'Background', 'Foreground', 'orphan', 'Cascade')];
    case 'gracePeriodSeconds':
      return [name, pick('0', '-1', '-9223372036854775808', '9223372036854775808', '30')];
    case 'resourceVersion':
      return [name, pick('0', '1', '-1', '18446744073709551616', 'abc', '999999999')];
    case 'resourceVersionMatch':
      return [name, pick('Exact', 'NotOlderThan', 'exact', 'Newest')];
    case 'limit':
      return [name, pick('0', '1', '-1', '500', '9223372036854775807', '9223372036854775808')];
    case 'continue':
      return [name, continueToken(rng)];
    case 'labelSelector':
      return [name, selector(rng, 'label')];
    case 'fieldSelector':
      return [name, selector(rng, 'field')];
    // watches are cut by the client after their headers; a short timeout keeps the server side short too
    case 'timeoutSeconds':
      return [name, pick('1', '0', '-1', '99999999999', '1.5')];
    case 'watch':
      return [name, pick('true', '1', 'false', 'yes')];
    case 'sendInitialEvents':
      return [name, pick('true', 'false', 'maybe')];
    case 'allowWatchBookmarks':
      return [name, pick('true', 'false', 'x')];
    case 'pretty':
      return [name, pick('true', 'false', '1')];
    case 'orphanDependents':
      return [name, pick('true', 'false', 'x')];
    case 'timeout':
      return [name, pick('1s', '-1s', '1x', '99999h', '0')];
    default:
      return [name, rng.pick(BAD_VALUES)];
  }
}

function encode(value: string, rng: Prng): string {
  // some values go out raw (a '%' alone, a '+', '&' inside a value) to test the query parser too
  return rng.bool(0.85) ? encodeURIComponent(value) : value.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}

/** a query string (without '?') of one to several hostile options, repeated names included */
export function hostileQuery(rng: Prng): string {
  const parts: string[] = [];
  for (let n = rng.int(1, 4); n > 0; n--) {
    const [k, v] = option(rng);
    parts.push(`${k}=${encode(v, rng)}`);
    if (rng.bool(0.1)) parts.push(`${k}=${encode(option(rng)[1], rng)}`);
  }
  return parts.join('&');
}
