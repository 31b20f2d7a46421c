import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstAddress, parseCidr } from './cidr.js';

test('IPv4 ranges: network address and first host', () => {
  assert.deepEqual(parseCidr('10.96.0.0/12'), { network: '10.96.0.0', prefixLength: 12, family: 4 });
  assert.equal(firstAddress(parseCidr('10.96.0.0/12')), '10.96.0.1');
  // host bits in the text are masked off, as Go's net.ParseCIDR does
  assert.equal(parseCidr('10.97.3.4/12').network, '10.96.0.0');
  assert.equal(firstAddress(parseCidr('10.0.0.0/24')), '10.0.0.1');
});

test('IPv6 ranges', () => {
  assert.equal(firstAddress(parseCidr('fd00:10:96::/108')), 'fd00:10:96::1');
  assert.equal(parseCidr('fd00:0:0:0:0:0:0:5/64').network, 'fd00::');
  assert.equal(firstAddress(parseCidr('::ffff:10.0.0.0/120')), '::ffff:a00:1');
});

test('bad CIDRs are refused', () => {
  for (const bad of ['10.0.0.0', '10.0.0.0/33', 'x/8', '10.0.0.0/', '10.0.0.0/a', '::/129']) {
    assert.throws(() => parseCidr(bad), /invalid CIDR/, bad);
  }
  assert.throws(() => firstAddress(parseCidr('10.0.0.1/32')), /no host addresses/);
});
