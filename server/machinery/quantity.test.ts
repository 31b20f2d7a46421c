import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  canonicalQuantity,
  compareQuantities,
  formatQuantity,
  isWholeQuantity,
  parseQuantity,
  quantityError,
  quantityFormatError,
  quantitySuffixError,
  quantityValue,
} from './quantity.js';
import { quantityCanonicalizerFor } from '../registry/quantity-fields.js';
import { loadSchemas } from '../apis/schema.js';

test('canonical text matches apimachinery Quantity.String()', () => {
  const cases: [string | number, string][] = [
    ['0', '0'],
    ['0.0', '0'],
    ['0.5', '500m'],
    [0.5, '500m'],
    ['0.1', '100m'],
    ['100m', '100m'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['1000', '1k'],
    ['1000k', '1M'],
    ['1.5k', '1500'],
    ['2048', '2048'],
    ['01', '1'],
    ['1e3', '1e3'],
    ['12e6', '12e6'],
    ['1.5e3', '1500'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['1.5Gi', '1536Mi'],
    ['1Ki', '1Ki'],
    ['0.5Ki', '512'],
    ['1.1Gi', '1181116006400m'],
    ['1n', '1n'],
    ['0.1n', '1n'],
    ['-1', '-1'],
    ['-0.5', '-500m'],
    [' 2 ', '2'],
    [3, '3'],
  ];
  for (const [input, want] of cases) assert.equal(formatQuantity(parseQuantity(input)), want, `${input}`);
});

test('parse errors carry ParseQuantity messages', () => {
  assert.equal(quantityError('1.2.3'), quantityFormatError);
  assert.equal(quantityError('1Q'), quantityFormatError);
  assert.equal(quantityError('abc'), quantityFormatError);
  assert.equal(quantityError(''), quantityFormatError);
  assert.equal(quantityError('1ki'), quantitySuffixError);
  assert.equal(quantityError('1Gi'), undefined);
  assert.equal(quantityError(true), quantityFormatError);
});

test('comparison, whole values and rounding', () => {
  assert.equal(compareQuantities(parseQuantity('1Gi'), parseQuantity('1000Mi')), 1);
  assert.equal(compareQuantities(parseQuantity('500m'), parseQuantity('0.5')), 0);
  assert.equal(compareQuantities(parseQuantity('-1'), parseQuantity('0')), -1);
  assert.equal(isWholeQuantity(parseQuantity('1500m')), false);
  assert.equal(isWholeQuantity(parseQuantity('2k')), true);
  assert.equal(quantityValue(parseQuantity('1500m')), 2n);
  assert.equal(canonicalQuantity('0.0001', -3), '1m');
  assert.equal(canonicalQuantity('250m', -3), '250m');
  assert.equal(canonicalQuantity('not a quantity'), 'not a quantity');
});

test('schema-driven canonicalization of a Deployment and a Pod', () => {
  const schemas = loadSchemas();
  const forDeploy = quantityCanonicalizerFor(schemas, 'apps', 'v1', 'Deployment');
  assert.ok(forDeploy);
  const d = {
    spec: {
      template: {
        spec: { containers: [{ name: 'a', resources: { limits: { cpu: 0.5, memory: '1024Mi' }, requests: { cpu: '0.0001' } } }] },
      },
    },
  };
  forDeploy(d);
  assert.deepEqual(d.spec.template.spec.containers[0]?.resources, { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '1m' } });
  const forPod = quantityCanonicalizerFor(schemas, '', 'v1', 'Pod');
  assert.ok(forPod);
  const p = { spec: { volumes: [{ name: 'v', emptyDir: { sizeLimit: '1000Mi' } }], overhead: { cpu: '1.5' } } };
  forPod(p);
  assert.equal(p.spec.volumes[0]?.emptyDir.sizeLimit, '1000Mi');
  assert.equal(p.spec.overhead.cpu, '1500m');
  assert.equal(quantityCanonicalizerFor(schemas, '', 'v1', 'ConfigMap'), undefined);
  const forLimitRange = quantityCanonicalizerFor(schemas, '', 'v1', 'LimitRange');
  assert.ok(forLimitRange);
  const lr = {
    metadata: { name: '0.5' },
    spec: { limits: [{ type: 'Container', max: { cpu: '0.5' }, default: { memory: '1024Mi' } }, null] },
  };
  forLimitRange(lr);
  assert.deepEqual(lr, {
    metadata: { name: '0.5' },
    spec: { limits: [{ type: 'Container', max: { cpu: '500m' }, default: { memory: '1Gi' } }, null] },
  });
});
