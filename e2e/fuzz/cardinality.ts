// Bodies small in bytes and large in members: tens of thousands of repeated keys, keys in
// descending order, list items a patch reorders, deletes or names in a $setElementOrder list,
// server-side apply of long keyed lists, JSON patches of the most operations kube takes. Each
// is cheap to send; handled one member against every other, each once held a replica's only
// thread for seconds to hours. The answer must come, within the request timeout, as a Status
// or an object.

import type { Json } from './json-text.js';
import type { Prng } from './prng.js';

/** the Deployment (created with the replica) whose container has LONG_LIST_ITEMS env vars E0, E1, ... */
export const LONG_LISTS = 'long-lists';
export const LONG_LIST_ITEMS = 15_000;

export interface CardinalityRequest {
  how: string;
  method: 'POST' | 'PATCH';
  /** the namespace's collection the request goes to */
  resource: 'pods' | 'configmaps' | 'deployments';
  /** the object a PATCH names (a POST names none) */
  name?: string;
  query: string;
  contentType: string;
  body: Buffer;
}

/** how many members: log-uniform from a few hundred. The largest are well below what fits in
 *  3 MB, enough for anything quadratic to take minutes, and keep the replica's transient memory
 *  (tens of MB per such body, collected late) under the test's bound. */
function count(rng: Prng, max: number): number {
  return 200 + rng.size(max - 200);
}

function names(n: number, order: 'ascending' | 'descending' | 'shuffled', rng: Prng, prefix = 'k'): string[] {
  const list = Array.from({ length: n }, (_v, i) => `${prefix}${i}`);
  if (order === 'descending') list.reverse();
  if (order === 'shuffled') {
    for (let i = list.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [list[i], list[j]] = [list[j] as string, list[i] as string];
    }
  }
  return list;
}

function json(v: Json): Buffer {
  return Buffer.from(JSON.stringify(v));
}

const fieldValidation = (rng: Prng): string => rng.pick(['Warn', 'Strict', 'Ignore']);

export function hostileCardinality(rng: Prng, target: string): CardinalityRequest {
  const order = rng.pick(['ascending', 'descending', 'shuffled'] as const);
  switch (rng.int(0, 6)) {
    case 0: {
      const n = count(rng, 60_000);
      const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: ${target}-many`, 'data:'];
      // one key repeated, or a few repeated in turn
      const keys = rng.int(1, 5);
      for (let i = 0; i < n; i++) lines.push(`  a${i % keys}: v${i}`);
      return {
        how: 'yaml-repeated-keys',
        method: 'POST',
        resource: 'configmaps',
        query: `dryRun=All&fieldValidation=${fieldValidation(rng)}`,
        contentType: 'application/yaml',
        body: Buffer.from(lines.join('\n')),
      };
    }
    case 1: {
      const data: Record<string, string> = {};
      for (const k of names(count(rng, 60_000), order, rng)) data[k] = 'v';
      return {
        how: `json-keys-${order}`,
        method: 'POST',
        resource: 'configmaps',
        query: `dryRun=All&fieldValidation=${fieldValidation(rng)}`,
        contentType: rng.bool() ? 'application/json' : 'application/yaml',
        body: json({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${target}-many` }, data }),
      };
    }
    case 2:
    case 3: {
      // against a Deployment whose container already has LONG_LIST_ITEMS env vars
      const n = count(rng, 30_000);
      const env = names(n, order, rng, 'E');
      const container: { [k: string]: Json } = { name: 'c' };
      let metadata: { [k: string]: Json } | undefined;
      const mode = rng.pick(['merge', 'delete', 'order', 'primitive'] as const);
      if (mode === 'merge') container.env = env.map((name) => ({ name, value: 'w' }));
      if (mode === 'delete') container.env = env.map((name) => ({ name, $patch: 'delete' }));
      if (mode === 'order') container['$setElementOrder/env'] = env.map((name) => ({ name }));
      if (mode === 'primitive') {
        const finalizers = names(n, order, rng, 'example.com/f');
        metadata = { finalizers, '$deleteFromPrimitiveList/finalizers': finalizers.filter((_f, i) => i % 2 === 0) };
      }
      const patch: { [k: string]: Json } = { spec: { template: { spec: { containers: [container] } } } };
      if (metadata) patch.metadata = metadata;
      return {
        how: `smp-${mode}-${order}`,
        method: 'PATCH',
        resource: 'deployments',
        name: LONG_LISTS,
        query: 'dryRun=All',
        contentType: 'application/strategic-merge-patch+json',
        body: json(patch),
      };
    }
    case 4: {
      const env = names(count(rng, 40_000), order, rng, 'E').map((name) => ({ name, value: 'v' }));
      // repeats: apply refuses a keyed list that names an item twice
      if (rng.bool(0.3)) env.push({ name: env[0]?.name ?? 'E0', value: 'again' });
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${target}-applied` },
        spec: { containers: [{ name: 'c', image: 'i', env }] },
      };
      return {
        how: `apply-env-${order}`,
        method: 'PATCH',
        resource: 'pods',
        name: `${target}-applied`,
        query: `dryRun=All&fieldManager=fuzz&fieldValidation=${fieldValidation(rng)}`,
        contentType: 'application/apply-patch+yaml',
        body: json(pod),
      };
    }
    default: {
      const n = rng.int(5_000, 10_000);
      const ops = Array.from(
        { length: n },
        (_v, i): Json =>
          rng.bool()
            ? { op: 'add', path: `/metadata/labels/l${n - i}`, value: 'v' }
            : { op: rng.pick(['copy', 'move']), from: '/metadata/labels', path: `/metadata/annotations` },
      );
      return {
        how: 'json-patch-ops',
        method: 'PATCH',
        resource: 'configmaps',
        name: target,
        query: 'dryRun=All',
        contentType: 'application/json-patch+json',
        body: json([{ op: 'add', path: '/metadata/labels', value: {} }, ...ops]),
      };
    }
  }
}
