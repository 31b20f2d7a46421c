import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { resolveAdvertiseAddress } from './advertise.js';

test('--advertise-address wins, then a specific --bind-address', () => {
  assert.equal(resolveAdvertiseAddress('192.0.2.1', '127.0.0.1'), '192.0.2.1');
  assert.equal(resolveAdvertiseAddress('', '127.0.0.1'), '127.0.0.1');
  assert.equal(resolveAdvertiseAddress('', '192.0.2.9'), '192.0.2.9');
});

test('a wildcard bind address falls back to an address of this host', () => {
  const a = resolveAdvertiseAddress('', '0.0.0.0');
  assert.notEqual(a, '0.0.0.0');
  assert.ok(net.isIP(a), a);
});
