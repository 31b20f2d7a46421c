import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { registerFormatLibrary } from './format-library.js';
import { registerNetworkLibraries } from './network-library.js';

const env = registerFormatLibrary(registerNetworkLibraries(new Environment({ enableOptionalTypes: true })));
const ev = (expr: string) => {
  const p = env.parse(expr);
  const c = p.check() as { valid: boolean; error?: Error };
  assert.ok(c.valid, `${expr}: ${c.error?.message}`);
  return p({});
};

test('format: named formats validate with apimachinery messages', () => {
  assert.equal(ev("!format.dns1123Label().validate('my-name').hasValue()"), true);
  assert.deepEqual(ev("format.dns1123Label().validate('My_Name').value()"), [
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ]);
  assert.equal(ev("format.named('uuid').hasValue() && !format.named('nope').hasValue()"), true);
  assert.equal(ev("format.named('uuid').value().validate('not-a-uuid').hasValue()"), true);
  assert.equal(ev("!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()"), true);
  assert.equal(ev("!format.date().validate('2024-02-29').hasValue() && format.date().validate('2023-02-29').hasValue()"), true);
  assert.equal(ev("!format.datetime().validate('2024-01-02T03:04:05Z').hasValue()"), true);
  assert.equal(ev("!format.byte().validate('aGVsbG8=').hasValue() && format.byte().validate('!').hasValue()"), true);
  assert.equal(ev("!format.labelValue().validate('ok.value').hasValue() && !format.uri().validate('https://x/y').hasValue()"), true);
});

test('ip.isCanonical beside ip()', () => {
  assert.equal(ev("ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')"), true);
  assert.equal(ev("ip('10.0.0.1').family()"), 4n);
});
