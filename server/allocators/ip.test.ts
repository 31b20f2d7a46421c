import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bandSize, bigIntToIp, canonicalIP, ipToBigInt, randomBelow, ServiceIPRange } from './ip.js';
import { formatPortRange, parsePortRange, portRangeContains, portRangeOffset } from './port-range.js';

test('IPv4 and IPv6 addresses round-trip through bigints in canonical form', () => {
  assert.equal(ipToBigInt('10.96.0.1'), (10n << 24n) | (96n << 16n) | 1n);
  assert.equal(bigIntToIp(ipToBigInt('10.96.0.1'), 'IPv4'), '10.96.0.1');
  assert.equal(canonicalIP('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
  assert.equal(canonicalIP('fd00::10.0.0.1'), 'fd00::a00:1');
  assert.equal(canonicalIP('::'), '::');
  assert.throws(() => canonicalIP('10.96.0'), /invalid IP/);
});

test('a /12 hands out network+1 .. broadcast-1; dynamic allocation starts 256 addresses up', () => {
  const r = new ServiceIPRange('10.96.0.0/12');
  assert.equal(r.cidr, '10.96.0.0/12');
  assert.equal(r.format(r.first), '10.96.0.1');
  assert.equal(r.format(r.last), '10.111.255.254');
  assert.equal(r.format(r.offsetAddress), '10.96.1.1');
  assert.equal(r.networkAddress, '10.96.0.0');
  assert.equal(r.contains(ipToBigInt('10.96.0.0')), false);
  assert.equal(r.containsPrefix(ipToBigInt('10.96.0.0')), true);
  assert.equal(r.contains(ipToBigInt('10.111.255.255')), false);
  assert.equal(r.containsPrefix(ipToBigInt('10.112.0.0')), false);
  const [upper, lower] = r.bands();
  assert.equal(r.format(upper!.first), '10.96.1.1');
  assert.equal(r.format(lower!.last), '10.96.1.0');
  assert.equal(bandSize(upper!) + bandSize(lower!), (1n << 20n) - 2n);
});

test('small ranges: a /24 keeps 16 addresses for requests; a /29 has no static band', () => {
  const r24 = new ServiceIPRange('10.0.0.0/24');
  assert.equal(r24.format(r24.offsetAddress), '10.0.0.17');
  const r29 = new ServiceIPRange('10.0.0.8/29');
  assert.equal(r29.bands().length, 1);
  assert.equal(r29.format(r29.first), '10.0.0.9');
  assert.equal(r29.format(r29.last), '10.0.0.14');
  // the host bits of the flag value do not matter
  assert.equal(new ServiceIPRange('10.0.0.77/24').cidr, '10.0.0.0/24');
});

test('IPv6 ranges include the last address; prefixes shorter than /64 are refused', () => {
  const r = new ServiceIPRange('fd00:10:96::/108');
  assert.equal(r.format(r.first), 'fd00:10:96::1');
  assert.equal(r.format(r.last), 'fd00:10:96::f:ffff');
  assert.throws(() => new ServiceIPRange('fd00::/48'), /shortest allowed prefix length/);
  assert.throws(() => new ServiceIPRange('10.0.0.0'), /invalid CIDR/);
});

test('randomBelow stays in range', () => {
  for (let i = 0; i < 200; i++) {
    const v = randomBelow(7n);
    assert.ok(v >= 0n && v < 7n);
  }
  assert.ok(randomBelow(1n << 64n) < 1n << 64n);
});

test('node port ranges: N-M, N+M, N; offset min(max(16, size/32), 128)', () => {
  const r = parsePortRange('30000-32767');
  assert.deepEqual(r, { base: 30000, size: 2768 });
  assert.equal(formatPortRange(r), '30000-32767');
  assert.equal(portRangeOffset(r), 86);
  assert.deepEqual(parsePortRange('30000+99'), { base: 30000, size: 100 });
  assert.deepEqual(parsePortRange('8080'), { base: 8080, size: 1 });
  assert.equal(portRangeOffset(parsePortRange('1-65535')), 128);
  assert.equal(portRangeOffset(parsePortRange('30000-30009')), 0);
  assert.equal(portRangeContains(r, 32767), true);
  assert.equal(portRangeContains(r, 32768), false);
  assert.throws(() => parsePortRange('32767-30000'), /not a valid port range/);
  assert.throws(() => parsePortRange('0-10'), /not a valid port range/);
  assert.throws(() => parsePortRange('abc'), /not a valid port range/);
});
