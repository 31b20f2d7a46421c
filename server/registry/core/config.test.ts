import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import type { StrategyContext } from '../strategy.js';
import { configMapStrategy } from './config.js';

const strategy = configMapStrategy();
const context = {} as StrategyContext;

function configMap(extra: Partial<KubeObject>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' }, ...extra };
}

const messages = (obj: KubeObject): string[] => strategy.validate(obj, context).map((e) => `${e.field}: ${e.detail ?? ''}`);

test('a data key named like a member of every JavaScript object is no binaryData key', () => {
  assert.deepEqual(messages(configMap({ data: { constructor: 'a', toString: 'b', __proto__x: 'c' } })), []);
  assert.deepEqual(messages(configMap({ data: { a: 'x' }, binaryData: { a: 'eA==' } })), [
    'data[a]: duplicate of key present in binaryData',
  ]);
});

test('keys are checked in data, then binaryData; the size counts both', () => {
  const errs = messages(configMap({ data: { 'bad key': 'x', ok: 'y' }, binaryData: { '..no': 'eA==' } }));
  assert.equal(errs.length, 2);
  assert.match(errs[0], /^data\[bad key\]: /);
  assert.match(errs[1], /^binaryData\[\.\.no\]: must not start with '\.\.'/);
  const big = 'x'.repeat(700 * 1024);
  assert.deepEqual(messages(configMap({ data: { a: big } })), []);
  assert.equal(messages(configMap({ data: { a: big }, binaryData: { b: Buffer.alloc(400 * 1024).toString('base64') } })).length, 1);
});
