import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSchemas } from '../../apis/schema.js';
import type { Json } from '../../machinery/json-patch.js';
import { applyStrategicMergePatch } from './strategic-merge.js';
import type { JsonObject } from './strategic-go.js';
import { deduplicateScalars, scanning } from './strategic-index.js';
import { patchSchemaOf } from './strategic-schema.js';

const schemas = loadSchemas();
const podNode = schemas.schemaFor('', 'v1', 'Pod');
assert.ok(podNode);
const pod = patchSchemaOf(schemas, podNode);

/** a small deterministic generator (mulberry32) */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** applies with the scans (kube's algorithm) and with the maps; both outcomes, error texts for errors */
function both(original: JsonObject, patch: JsonObject): [unknown, unknown] {
  const run = (limit: number): unknown => {
    const saved = scanning.limit;
    scanning.limit = limit;
    try {
      const o = structuredClone(original);
      const result = applyStrategicMergePatch(o, structuredClone(patch), pod);
      // the live object as Go leaves it (lists shrunk in place) is part of the answer
      return { result, original: o };
    } catch (err) {
      return { error: (err as Error).message };
    } finally {
      scanning.limit = saved;
    }
  };
  return [run(Number.POSITIVE_INFINITY), run(0)];
}

test("the maps give the scans' answers: merged lists, deletions, orders, primitive lists, errors", () => {
  const next = random(20261129);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  const keyValue = (): Json => (next() < 0.9 ? pick(names) : pick<Json>([1, '1', null, true, { x: 1 }]));
  const envItem = (): Json => {
    const r = next();
    if (r < 0.02) return 'not-a-map';
    const item: JsonObject = r < 0.05 ? {} : { name: keyValue() };
    if (next() < 0.5) item.value = `v${Math.floor(next() * 5)}`;
    if (next() < 0.12) item.$patch = pick(['delete', 'delete', 'delete', 'replace', 'merge']);
    return item;
  };
  const list = <T>(n: number, f: () => T): T[] => Array.from({ length: Math.floor(next() * n) }, f);
  let errors = 0;
  for (let round = 0; round < 3000; round++) {
    const original: JsonObject = {
      metadata: { finalizers: list(60, () => pick<Json>(names)) },
      spec: {
        containers: [
          { name: 'c', image: 'i', env: list(70, (): Json => (next() < 0.03 ? { value: 'y' } : { name: keyValue(), value: 'x' })) },
        ],
      },
    };
    const container: JsonObject = { name: 'c', env: list(70, envItem) };
    if (next() < 0.3) container['$setElementOrder/env'] = list(20, () => ({ name: keyValue() }));
    const patch: JsonObject = { spec: { containers: [container] } };
    const metadata: JsonObject = {};
    if (next() < 0.6) metadata.finalizers = list(60, () => pick<Json>([...names, 1, true, null]));
    if (next() < 0.3) metadata['$deleteFromPrimitiveList/finalizers'] = list(50, () => pick<Json>(names));
    if (next() < 0.3) metadata['$setElementOrder/finalizers'] = list(40, () => pick<Json>(names));
    patch.metadata = metadata;
    const [scanned, mapped] = both(original, patch);
    if ((scanned as { error?: string }).error) errors++;
    assert.deepEqual(mapped, scanned, `round ${round}: ${JSON.stringify(patch).slice(0, 300)}`);
  }
  // the rounds reach both answers
  assert.ok(errors > 100 && errors < 2900, `${errors} of 3000 rounds were errors`);
});

test("de-duplication of scalars: item for item what Go's loop leaves", () => {
  const next = random(7);
  const goLoop = (s: Json[]): Json[] => {
    let last = s.length - 1;
    for (let i = 0; i < last; i++) {
      for (let j = i + 1; j <= last; j++) {
        if (s[i] === s[j] && typeof s[i] !== 'object') {
          s[j] = s[last] as Json;
          s.length = last;
          last--;
          j--;
        }
      }
    }
    return s;
  };
  for (let round = 0; round < 300; round++) {
    const values: Json[] = ['a', 'b', 'c', 1, 2, true];
    const s = Array.from({ length: Math.floor(next() * 80) }, () => values[Math.floor(next() * values.length)] as Json);
    assert.deepEqual(deduplicateScalars(s.slice()), goLoop(s.slice()), JSON.stringify(s));
  }
});

test('20k items against 20k in reverse order, 20k deletions, 20k finalizers: merged in one pass each', () => {
  const n = 20_000;
  const env = Array.from({ length: n }, (_v, i) => ({ name: `E${i}`, value: 'v' }));
  const original = {
    metadata: { finalizers: Array.from({ length: n }, (_v, i) => `f${i}`) },
    spec: { containers: [{ name: 'c', image: 'i', env }] },
  } as JsonObject;
  const reversed = applyStrategicMergePatch(
    structuredClone(original),
    { spec: { containers: [{ name: 'c', env: env.map((_e, i) => ({ name: `E${n - 1 - i}`, value: 'w' })) }] } } as JsonObject,
    pod,
  ) as { spec: { containers: { env: { name: string; value: string }[] }[] } };
  const merged = reversed.spec.containers[0]?.env ?? [];
  assert.equal(merged.length, n);
  assert.deepEqual(merged[0], { name: `E${n - 1}`, value: 'w' });
  const deleted = applyStrategicMergePatch(
    structuredClone(original),
    {
      spec: { containers: [{ name: 'c', env: env.slice(1).map((e) => ({ name: e.name, $patch: 'delete' })) }] },
      metadata: {
        '$deleteFromPrimitiveList/finalizers': original.metadata && (original.metadata as { finalizers: string[] }).finalizers.slice(1),
      },
    } as JsonObject,
    pod,
  ) as { metadata: { finalizers: string[] }; spec: { containers: { env: unknown[] }[] } };
  assert.deepEqual(deleted.spec.containers[0]?.env, [{ name: 'E0', value: 'v' }]);
  assert.deepEqual(deleted.metadata.finalizers, ['f0']);
});
