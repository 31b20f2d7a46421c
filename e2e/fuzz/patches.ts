// Patch bodies of every patch type: JSON patches whose copies, moves and tests are hostile
// (amplification, cycles, odd pointers), merge patches and strategic merge patches with
// directives in the wrong places, and deep documents for each.

import { anyValue, deepText, raw, toJsonText, type Json } from './json-text.js';
import type { Prng } from './prng.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

const POINTERS = [
  '',
  '/',
  '/metadata',
  '/metadata/annotations',
  '/metadata/annotations/a',
  '/metadata/labels/app',
  '/metadata/name',
  '/metadata/namespace',
  '/metadata/resourceVersion',
  '/metadata/uid',
  '/metadata/finalizers/-',
  '/metadata/finalizers/0',
  '/data',
  '/data/k',
  '/data/-',
  '/spec/containers/0',
  '/spec/containers/-',
  '/spec/containers/01',
  '/spec/containers/-1',
  '/spec/containers/99999999999999999999',
  '/spec/containers/0/env/0/value',
  '/a~1b',
  '/a~2b',
  '/~',
  '/data/k/x',
  'data',
  '/metadata/annotations/' + 'x'.repeat(300),
  '//',
  '/metadata//',
  '/kind',
  '/apiVersion',
  '/metadata/managedFields/0',
];

function pointer(rng: Prng): string {
  if (rng.bool(0.8)) return rng.pick(POINTERS);
  return '/' + Array.from({ length: rng.size(40) + 1 }, () => rng.pick(['metadata', 'a', '0', '-', '~1', 'data', 'spec'])).join('/');
}

/** a hostile JSON patch, and whether kube refuses it whatever the object */
export function hostileJsonPatch(rng: Prng): { text: string; how: string; mustFail: boolean } {
  switch (rng.int(0, 6)) {
    case 0: {
      // each copy doubles the annotations: kube bounds what a patch may copy
      const copies = rng.pick([10, 20, 30, rng.int(1, 40)]);
      const ops: Json[] = [{ op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(rng.pick([100, 1000, 10_000])) } }];
      for (let i = 0; i < copies; i++) ops.push({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/a${i}` });
      return { text: toJsonText(ops), how: 'copy-amplification', mustFail: copies >= 25 };
    }
    case 1: {
      const ops: Json[] = [];
      for (let i = rng.int(1, 8); i > 0; i--) {
        const op = rng.pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'nop', '', 'ADD']);
        const o: { [k: string]: Json } = { op, path: pointer(rng) };
        if (rng.bool(0.7)) o.from = pointer(rng);
        if (rng.bool(0.8)) o.value = anyValue(rng);
        ops.push(o);
      }
      return { text: toJsonText(ops), how: 'random-ops', mustFail: false };
    }
    case 2: {
      // moves into oneself, copies of the root into a child
      const ops: Json[] = [
        rng.pick<Json>([
          { op: 'move', from: '/metadata', path: '/metadata/x' },
          { op: 'copy', from: '', path: '/metadata/annotations/self' },
          { op: 'move', from: '', path: '/data' },
          { op: 'copy', from: '/metadata', path: '/metadata/labels' },
        ]),
      ];
      return { text: toJsonText(ops), how: 'self-reference', mustFail: false };
    }
    case 3: {
      const ops = Array.from({ length: rng.size(100_000) + 1 }, (_v, i): Json => ({ op: 'test', path: '/metadata/name', value: `v${i}` }));
      return { text: toJsonText(ops), how: 'many-ops', mustFail: false };
    }
    case 4: {
      const depth = rng.pick([1000, 10_000, rng.size(100_000)]);
      return {
        text: toJsonText([{ op: 'add', path: '/metadata/annotations/deep', value: raw(deepText(depth, 'mixed')) }]),
        how: 'deep-value',
        mustFail: depth > 10_000,
      };
    }
    case 5:
      return { text: toJsonText(anyValue(rng)), how: 'not-a-list', mustFail: false };
    default:
      return {
        text: toJsonText([
          { op: 'add', path: '/metadata/annotations/big', value: 'x'.repeat(rng.pick([1 << 20, 3 << 20, 4 << 20])) },
          { op: 'copy', from: '/metadata/annotations/big', path: '/metadata/annotations/big2' },
        ]),
        how: 'big-copy',
        mustFail: true,
      };
  }
}

const SMP_DIRECTIVES: Json[] = [
  { $patch: 'replace' },
  { $patch: 'delete' },
  { $patch: 'merge' },
  { $patch: 'explode' },
  { $patch: 1 },
  { $retainKeys: ['a'] },
  { $retainKeys: 'a' },
  { $retainKeys: [{}] },
  { '$setElementOrder/containers': [{ name: 'c' }, { name: 'zzz' }] },
  { '$setElementOrder/containers': 'x' },
  { '$deleteFromPrimitiveList/finalizers': ['a'] },
  { '$deleteFromPrimitiveList/finalizers': {} },
  { $unknownDirective: true },
];

/** a hostile merge or strategic merge patch */
export function hostileMergePatch(type: 'merge' | 'strategic', rng: Prng): { text: string; how: string; mustFail: boolean } {
  switch (rng.int(0, 4)) {
    case 0: {
      const depth = rng.pick([2000, 9000, 12_000, rng.size(100_000)]);
      const where = rng.pick(['metadata', 'data', 'spec']);
      return {
        text: `{"${where}":${deepText(depth, rng.pick(['object', 'mixed', 'array'] as const))}}`,
        how: 'deep',
        mustFail: depth > 10_000,
      };
    }
    case 1: {
      const directive = rng.pick(SMP_DIRECTIVES);
      const place = rng.pick<(d: Json) => Json>([
        (d) => d,
        (d) => ({ metadata: d }),
        (d) => ({ spec: { containers: [d] } }),
        (d) => ({ spec: { containers: [{ name: 'c', env: [d] }] } }),
        (d) => ({ data: d }),
        (d) => ({ metadata: { finalizers: [d] } }),
      ]);
      return { text: toJsonText(place(directive)), how: 'directive', mustFail: false };
    }
    case 2:
      return { text: toJsonText({ metadata: { name: rng.pick(['other', null, 1]) } }), how: 'rename', mustFail: false };
    case 3:
      return { text: toJsonText(anyValue(rng)), how: 'any', mustFail: false };
    default:
      return {
        text: toJsonText({
          spec: {
            containers: Array.from(
              { length: rng.size(5000) },
              (_v, i): Json => ({ name: `c${i % 3}`, $patch: rng.pick(['delete', 'replace', 'merge']) }),
            ),
          },
        }),
        how: `${type}-list-directives`,
        mustFail: false,
      };
  }
}
