import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstServiceIP } from './service-ip.js';

test('first service IP of an IPv4 range is the network address plus one', () => {
  assert.deepEqual(firstServiceIP('10.0.0.0/24'), { ip: '10.0.0.1', family: 'IPv4' });
  assert.deepEqual(firstServiceIP('10.96.0.0/12'), { ip: '10.96.0.1', family: 'IPv4' });
  // a host address inside the range still yields the range's first address
  assert.deepEqual(firstServiceIP('172.16.5.77/16'), { ip: '172.16.0.1', family: 'IPv4' });
});

test('first service IP of an IPv6 range and of a dual-stack pair', () => {
  assert.deepEqual(firstServiceIP('fd00::/108'), { ip: 'fd00::1', family: 'IPv6' });
  assert.deepEqual(firstServiceIP('fd00:10:96::/112'), { ip: 'fd00:10:96::1', family: 'IPv6' });
  assert.deepEqual(firstServiceIP('10.0.0.0/24,fd00::/108'), { ip: '10.0.0.1', family: 'IPv4' });
  assert.deepEqual(firstServiceIP('fd00::/108, 10.0.0.0/24'), { ip: 'fd00::1', family: 'IPv6' });
});

test('malformed ranges are rejected', () => {
  assert.throws(() => firstServiceIP('10.0.0.0'));
  assert.throws(() => firstServiceIP('10.0.0.1/32'));
  assert.throws(() => firstServiceIP('nonsense/24'));
});
