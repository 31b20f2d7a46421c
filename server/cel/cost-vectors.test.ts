// Cost vectors published with kube-apiserver: each expression with the estimate range
// (min..max) and the runtime cost cel-go gives it in kube's library test environment
// (kubernetes/apiserver pkg/cel/library/cost_test.go: TestListsCost, TestIndexOfCost,
// TestURLsCost, TestIPCost, TestIPIsCanonicalCost, TestCIDRCost, TestStringLibrary,
// TestAuthzLibrary, TestQuantityCost, TestNameFormatCost, TestSetsCost, TestSemverCost,
// TestTwoVariableComprehensionCost). In that environment a string or bytes value of unknown
// size is estimated at 0..12, and other values of unknown size at any size.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuthorizerSession, AuthorizerValue } from './authorizer-library.js';
import { evaluateWithCost } from './budget.js';
import { estimateCostRange } from './cost.js';
import { celEnvironment } from './environment.js';

const env = celEnvironment({ age: 'stored', authorizer: true, homogeneousAggregateLiterals: false });
const fallbackSize = (type: string) => (type === 'string' || type === 'bytes' ? { min: 0, max: 12 } : undefined);
const authorizer = new AuthorizerValue(new AuthorizerSession(undefined), { username: 'alice', groups: [] });

/** [expression, estimated min, estimated max, runtime cost] */
type Vector = [string, number, number, number];

function measure(expr: string): { min: number; max: number; runtime: number } {
  const p = env.parse(expr);
  const c = p.check() as { valid: boolean; error?: Error };
  if (!c.valid) throw c.error;
  const est = estimateCostRange(p.ast, { authorizer: undefined }, { fallbackSize });
  const r = evaluateWithCost(p, { authorizer });
  if (!r.ok) throw r.error;
  return { ...est, runtime: r.cost };
}

function check(vectors: Vector[]): void {
  const wrong: string[] = [];
  for (const [expr, min, max, runtime] of vectors) {
    const got = measure(expr);
    if (got.min !== min || got.max !== max || got.runtime !== runtime)
      wrong.push(`${expr}: want ${min}..${max} ${runtime}, got ${got.min}..${got.max} ${got.runtime}`);
  }
  assert.deepEqual(wrong, []);
}

const ints = '[1, 2, 3, 4, 5]';
const uints = '[uint(1), uint(2), uint(3), uint(4), uint(5)]';
const doubles = '[1.0, 2.0, 3.0, 4.0, 5.0]';
const bools = '[false, true, false, true, false]';
const strs = "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']";
const byteses = "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')]";
const durations = "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]";
const timestamps = `[${[1, 2, 3, 4, 5].map((d) => `timestamp('2011-01-0${d}T00:00:00.000+01:00')`).join(', ')}]`;
const str50 = "'01234567890123456789012345678901234567890123456789'";

test('lists library: sum, isSorted, max, min, indexOf, lastIndexOf', () => {
  check([
    [`${ints}.sum()`, 15, 15, 15],
    [`${uints}.sum()`, 20, 20, 20],
    [`${doubles}.sum()`, 15, 15, 15],
    [`${durations}.sum()`, 20, 20, 20],
  ]);
  for (const op of ['.isSorted()', '.max()', '.min()']) {
    check([
      [ints + op, 15, 15, 15],
      [uints + op, 20, 20, 20],
      [doubles + op, 15, 15, 15],
      [bools + op, 15, 15, 15],
      [strs + op, 15, 25, 15],
      [byteses + op, 25, 35, 25],
      [durations + op, 20, 20, 20],
      [timestamps + op, 20, 20, 20],
    ]);
  }
  for (const op of ['indexOf', 'lastIndexOf']) {
    check([
      [`${ints}.${op}(3)`, 15, 15, 15],
      [`${uints}.${op}(uint(3))`, 21, 21, 21],
      [`${doubles}.${op}(3.0)`, 15, 15, 15],
      [`${bools}.${op}(true)`, 15, 15, 15],
      [`${strs}.${op}('x')`, 15, 25, 15],
      [`${byteses}.${op}(bytes('x'))`, 26, 36, 26],
      [`${durations}.${op}(duration('3s'))`, 21, 21, 21],
      [`${timestamps}.${op}(timestamp('2011-01-03T00:00:00.000+01:00'))`, 21, 21, 21],
      [`${str50}.${op}('123')`, 5, 5, 5],
    ]);
  }
});

test('urls, ip and cidr libraries', () => {
  // kube's vectors take Go's opaque form `https:://...` (scheme https, no host)
  const u = "url('https:://kubernetes.io/')";
  check([
    ...['getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'getQuery'].map((f): Vector => [`${u}.${f}()`, 4, 4, 4]),
    [`${u} == url('https:://kubernetes.io/')`, 7, 9, 7],
    [`${u} == url('http://x.b')`, 5, 5, 5],
  ]);
  const ip4 = "ip('192.168.0.1')";
  const ip6 = "ip('2001:db8:3333:4444:5555:6666:7777:8888')";
  const ipOps = ['family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast'];
  check([
    [ip4, 2, 2, 2],
    [ip6, 4, 4, 4],
    ...ipOps.map((f): Vector => [`${ip4}.${f}()`, 3, 3, 3]),
    ...ipOps.map((f): Vector => [`${ip6}.${f}()`, 5, 5, 5]),
    [`${ip4} == ip('192.168.0.1')`, 5, 5, 5],
    [`${ip6} == ip('192.168.0.1')`, 7, 7, 7],
    ["ip.isCanonical('192.168.0.1')", 3, 3, 3],
    ["ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", 8, 8, 8],
    ["ip.isCanonical('2001:db8::abcd')", 3, 3, 3],
  ]);
  const c4 = "cidr('192.168.0.0/16')";
  const c6 = "cidr('2001:db8::/32')";
  const both = (c: string): Vector[] => [
    [c, 2, 2, 2],
    ...['ip', 'prefixLength', 'masked'].map((f): Vector => [`${c}.${f}()`, 3, 3, 3]),
    [`${c} == cidr('2001:db8::/32')`, 5, 5, 5],
  ];
  check([
    ...both(c4),
    ...both(c6),
    ...["cidr('192.0.0.0/30')", "cidr('192.168.0.0/16')", "'192.0.0.0/30'", "'192.168.0.0/16'"].map(
      (x): Vector => [`${c4}.containsCIDR(${x})`, 7, 11, 7],
    ),
    [`${c4}.containsIP(ip('192.0.0.1'))`, 4, 7, 4],
    [`${c4}.containsIP(ip('192.169.0.1'))`, 5, 8, 5],
    [`${c4}.containsIP(ip('192.169.169.250'))`, 5, 8, 5],
    [`${c4}.containsIP('192.0.0.1')`, 4, 7, 4],
    [`${c4}.containsIP('192.169.0.1')`, 5, 8, 5],
    ...["cidr('2001:db8::/126')", "cidr('2001:db8::/32')", "'2001:db8::/126'", "'2001:db8::/32'"].map(
      (x): Vector => [`${c6}.containsCIDR(${x})`, 7, 11, 7],
    ),
    [`${c6}.containsIP(ip('2001:db8:3333:4444:5555:6666:7777:8888'))`, 7, 10, 7],
    [`${c6}.containsIP(ip('2001:db8::1'))`, 5, 8, 5],
    [`${c6}.containsIP('2001:db8:3333:4444:5555:6666:7777:8888')`, 7, 10, 7],
    [`${c6}.containsIP('2001:db8::1')`, 5, 8, 5],
  ]);
});

test('strings extension and regex library', () => {
  check([
    ["'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3, 3, 3],
    ["'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 7, 9, 9],
    ["'ABCDEFGHIJ abcdefghij'.upperAscii()", 3, 3, 3],
    ["'ABCDEFGHIJ abcdefghij'.upperAscii() == 'abcdefghij ABCDEFGHIJ'.upperAscii()", 7, 9, 9],
    ["strings.quote('ABCDEFGHIJ abcdefghij')", 3, 3, 3],
    ["strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 7, 11, 9],
    ["'abc 123 def 123'.replace('123', '456')", 3, 3, 3],
    ["'abc 123 def 123'.replace('', 'x')", 3, 3, 3],
    ["'abc 123 def 123'.replace('123', '')", 3, 3, 3],
    ["'abc 123 def 123'.replace('123', '456', 1)", 3, 3, 3],
    ["'abc 123 def 123'.split(' ')", 3, 3, 3],
    ["'abc 123 def 123'.split(' ', 1)", 3, 3, 3],
    ["'abc 123 def 123'.substring(5)", 2, 2, 2],
    ["'abc 123 def 123'.substring(5, 8)", 2, 2, 2],
    ["'  abc 123 def 123  '.trim()", 2, 2, 2],
    ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')", 11, 23, 15],
    ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()", 10, 22, 13],
    ["'abc 123 def 123'.find('123')", 2, 2, 2],
    ["'abc 123 def 123'.findAll('123')", 2, 2, 2],
    ["'abc 123 def 123'.findAll('123', 1)", 2, 2, 2],
  ]);
});

test('authorizer library', () => {
  const resource = "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')";
  const selector = "'spec.nodeName=example-node-name.fully.qualified.domain.name.example.com'";
  check([
    ["authorizer.path('/healthz')", 2, 2, 2],
    [resource, 6, 6, 6],
    [`authorizer.group('').resource('pods').fieldSelector(${selector})`, 1821, 1821, 1821],
    [`authorizer.group('').resource('pods').labelSelector(${selector})`, 1821, 1821, 1821],
    ["authorizer.path('/healthz').check('get').allowed()", 350003, 350003, 350003],
    [`${resource}.check('create').allowed()`, 350007, 350007, 350007],
    [`${resource}.check('create').errored()`, 350007, 350007, 350007],
    [`${resource}.check('create').error()`, 350007, 350007, 350007],
  ]);
});

test('quantity, format and semver libraries', () => {
  check([
    ['quantity("12Mi")', 1, 1, 1],
    ['isQuantity("20")', 1, 1, 1],
    ['isQuantity("20M")', 1, 1, 1],
    ['quantity("200M") == quantity("200M")', 3, 3, 3],
    ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 3, 6, 6],
    ['quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")', 3, 9, 9],
    ['quantity("50M").isLessThan(quantity("50Mi"))', 3, 3, 3],
    ['quantity("50Mi").isGreaterThan(quantity("50M"))', 3, 3, 3],
    ['quantity("200M").compareTo(quantity("0.2G")) > 0', 4, 4, 4],
    ['quantity("50k").add(quantity("20")) == quantity("50.02k")', 5, 5, 5],
    ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', 5, 5, 5],
    ['quantity("50k").sub(20) == quantity("49980")', 4, 4, 4],
    ['quantity("50k").add(20).sub(quantity("100k")).asInteger() > 0', 6, 6, 6],
    ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0', 7, 7, 7],
    ['quantity("50k").asInteger() > 0', 3, 3, 3],
    ['quantity("50").isInteger()', 2, 2, 2],
    ['quantity("50.703k").asApproximateFloat() > 0.0', 3, 3, 3],
    ['format.named("dns1123subdomain")', 1, 1, 1],
    ['format.named("dns1123Subdomain").value().validate("my-name")', 34, 34, 17],
    ['format.named("dns1123Label").value().validate("my-name")', 34, 34, 10],
    ['format.named("dns1123Label").value() == format.named("dns1123Label").value()', 5, 11, 5],
    ['semver("1.0.0")', 1, 1, 1],
    ['semver("1234.56789012345.67890123456789")', 4, 4, 4],
    ['isSemver("1.0.0")', 1, 1, 1],
    ['isSemver("1234.56789012345.67890123456789")', 4, 4, 4],
    ['semver("1.2.3").major()', 2, 2, 2],
    ['semver("1.2.3").minor()', 2, 2, 2],
    ['semver("1.2.3").patch()', 2, 2, 2],
    ['semver("1.0.0").isLessThan(semver("1.1.0"))', 3, 3, 3],
    ['semver("1.1.0").isGreaterThan(semver("1.0.0"))', 3, 3, 3],
    ['semver("1.0.0").compareTo(semver("1.2.3"))', 3, 3, 3],
  ]);
});

test('sets extension', () => {
  check([
    ['sets.contains([], [])', 21, 21, 21],
    ['sets.contains([1], [])', 21, 21, 21],
    ['sets.contains([1], [1])', 22, 22, 22],
    ['sets.contains([1], [1, 1])', 23, 23, 23],
    ['sets.contains([1, 1], [1])', 23, 23, 23],
    ['sets.contains([2, 1], [1])', 23, 23, 23],
    ['sets.contains([1, 2, 3, 4], [2, 3])', 29, 29, 29],
    ['!sets.contains([1], [2])', 23, 23, 23],
    ['!sets.contains([1], [1, 2])', 24, 24, 24],
    ['sets.equivalent([], [])', 21, 21, 21],
    ['sets.equivalent([1], [1])', 23, 23, 23],
    ['sets.equivalent([1], [1, 1])', 25, 25, 25],
    ['sets.equivalent([1, 1], [1])', 25, 25, 25],
    ['!sets.equivalent([2, 1], [1])', 26, 26, 26],
    ['!sets.equivalent([1], [1, 2])', 26, 26, 26],
    ['sets.intersects([1], [1])', 22, 22, 22],
    ['sets.intersects([1], [1, 1])', 23, 23, 23],
    ['sets.intersects([1, 1], [1])', 23, 23, 23],
    ['sets.intersects([2, 1], [1])', 23, 23, 23],
    ['sets.intersects([1], [1, 2])', 23, 23, 23],
    ['!sets.intersects([], [])', 22, 22, 22],
    ['!sets.intersects([1], [])', 22, 22, 22],
    ['!sets.intersects([1], [2])', 23, 23, 23],
  ]);
  // lists mixing numeric types (list<dyn> in cel-go's environment without homogeneous literals)
  check([
    ['sets.contains([1], [1.0, 1])', 23, 23, 23],
    ['sets.contains([1, 2], [2u, 2.0])', 25, 25, 25],
    ['sets.contains([1, 2u], [2, 2.0])', 25, 25, 25],
    ['sets.contains([1, 2.0, 3u], [1.0, 2u, 3])', 30, 30, 30],
    ['sets.contains([[1], [2, 3]], [[2, 3.0]])', 53, 53, 53],
    ['!sets.contains([1], ["1", 1])', 24, 24, 24],
    ['!sets.contains([1], [1.1, 1u])', 24, 24, 24],
    ['sets.equivalent([1], [1u, 1.0])', 25, 25, 25],
    ['sets.equivalent([1, 2, 3], [3u, 2.0, 1])', 39, 39, 39],
    ['sets.equivalent([[1.0], [2, 3]], [[1], [2, 3.0]])', 69, 69, 69],
    ['!sets.equivalent([1, 2], [2u, 2, 2.0])', 34, 34, 34],
    ['!sets.equivalent([1, 2], [1u, 2, 2.3])', 34, 34, 34],
    ['sets.intersects([1], [1.0, 2])', 23, 23, 23],
    ['sets.intersects([1, 2], [2u, 2, 2.0])', 27, 27, 27],
    ['sets.intersects([1, 2], [1u, 2, 2.3])', 27, 27, 27],
    ['sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])', 65, 65, 65],
    ['!sets.intersects([1], ["1", 2])', 24, 24, 24],
    ['!sets.intersects([1], [1.1, 2u])', 24, 24, 24],
  ]);
});

test('two-variable comprehensions', () => {
  check([
    ["{'a': 1, 'b': 2}.all(k, v, v > 0)", 37, 41, 41],
    ["{'a': 1, 'b': 2}.exists(k, v, v > 0)", 39, 43, 40],
    ["{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 38, 40, 40],
    ["{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", 71, 71, 71],
    ["{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)", 67, 75, 75],
    ["{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})", 131, 131, 131],
    ["{'a': 1, 'b': 2}.transformMapEntry(k, v, v < 5, {k: v + 1})", 67, 135, 135],
    ['[1, 2].all(i, v, v > 0)', 17, 21, 21],
    ['[1, 2].exists(i, v, v > 0)', 19, 23, 20],
    ['[1, 2].existsOne(i, v, v > 0)', 18, 20, 20],
    ['[1, 2].transformList(i, v, v + 1)', 49, 49, 49],
    ['[1, 2].transformList(i, v, v < 5, v + 1)', 27, 53, 53],
  ]);
});
