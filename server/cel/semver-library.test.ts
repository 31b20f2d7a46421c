import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { registerSemverLibrary } from './semver-library.js';

const env = registerSemverLibrary(new Environment());
const ev = (expr: string) => {
  const p = env.parse(expr);
  const c = p.check() as { valid: boolean; error?: Error };
  assert.ok(c.valid, `${expr}: ${c.error?.message}`);
  return p({});
};

test('semver: strict and normalized parsing, parts, precedence', () => {
  assert.equal(ev("isSemver('1.2.3')"), true);
  assert.equal(ev("isSemver('v1.2.3')"), false);
  assert.equal(ev("isSemver('v1.2', true)"), true);
  assert.equal(ev("isSemver('1.02.3')"), false);
  assert.equal(ev("semver('v01.2', true).major()"), 1n);
  assert.equal(ev("semver('1.2.3-alpha.1+build').patch()"), 3n);
  assert.equal(ev("semver('1.10.0').isGreaterThan(semver('1.9.9'))"), true);
  assert.equal(ev("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))"), true);
  assert.equal(ev("semver('1.0.0-alpha.2').compareTo(semver('1.0.0-alpha.10'))"), -1n);
  assert.equal(ev("semver('1.0.0-beta').compareTo(semver('1.0.0-alpha.1'))"), 1n);
  assert.throws(() => ev("semver('nope')"), /Invalid semver/);
});
