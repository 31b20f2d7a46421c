// Validating admission of a create reads through the create's fence optimistically: its
// lookups wait for no revision probe and become conditions of the create's etcd transaction.
// When one no longer holds, nothing is written and admission runs again, reading strictly.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { ctx, startRegistry, type RegistryHarness } from './testing/harness.js';
import type { AdmissionAttributes, AdmissionHooks, RESTResource } from './rest.js';

let h: RegistryHarness;
let configmaps: RESTResource;
let quotas: RESTResource;

before(async () => {
  h = await startRegistry({}, { watchCache: true });
  configmaps = h.rest('', 'v1', 'configmaps');
  quotas = h.rest('', 'v1', 'resourcequotas');
  const namespaces = h.rest('', 'v1', 'namespaces');
  await namespaces.create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'opt' } });
  // a consistent read: the cache holds the namespace from here on (a create looks it up there)
  await namespaces.get(ctx(), 'opt', {});
});

after(async () => {
  await h.close();
});

const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

/** a validating hook that lists the namespace's quotas through the write's fence, as the
 *  ResourceQuota plugin does, and records how many it saw on each call */
function quotaReadingHook(onRead: (seen: number, call: number) => Promise<void> = async () => {}): {
  hooks: AdmissionHooks;
  seen: number[];
} {
  const seen: number[] = [];
  const hooks: AdmissionHooks = {
    async validate(attrs: AdmissionAttributes) {
      const items = await quotas.listShared!(ctx(attrs.namespace, { readFence: attrs.readFence }), {});
      seen.push(items.length);
      await onRead(items.length, seen.length);
    },
  };
  return { hooks, seen };
}

/** counts the revision probes (etcd round trips of consistent reads) while `work` runs */
async function probesDuring(work: () => Promise<void>): Promise<number> {
  const store = h.storage;
  const original = store.currentResourceVersion;
  let probes = 0;
  store.currentResourceVersion = () => {
    probes++;
    return original.call(store);
  };
  try {
    await work();
  } finally {
    store.currentResourceVersion = original;
  }
  return probes;
}

test('a create whose lookups still hold is made after one round of validating admission, with no revision probe', async () => {
  const { hooks, seen } = quotaReadingHook();
  let made: KubeObject | undefined;
  const probes = await probesDuring(async () => {
    made = await configmaps.create(ctx('opt', { admission: hooks }), cm('steady'));
  });
  assert.equal(made?.metadata.name, 'steady');
  assert.deepEqual(seen, [0]);
  assert.equal(probes, 0);
  // the same lookup outside a write is a consistent read of its own
  assert.equal(await probesDuring(async () => void (await quotas.listShared!(ctx('opt'), {}))), 1);
});

test('a quota created between the lookup and the write: the create is retried and admission sees it', async () => {
  const warnings: string[] = [];
  const { hooks, seen } = quotaReadingHook(async (_seen, call) => {
    warnings.push('a warning of every round');
    if (call !== 1) return;
    // another client creates a quota after the plugin looked
    await quotas.create(ctx('opt'), { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '1' } } });
  });
  const made = await configmaps.create(ctx('opt', { admission: hooks, warnings }), cm('raced'));
  assert.equal(made.metadata.name, 'raced');
  assert.deepEqual(seen, [0, 1], 'the second round read strictly and saw the quota');
  assert.deepEqual(warnings, ['a warning of every round'], "the first round's warnings are dropped");
  assert.equal((await configmaps.get(ctx('opt'), 'raced', {})).metadata.uid, made.metadata.uid);
});

test('a dry run reads strictly: nothing is written for its conditions to guard', async () => {
  let calls = 0;
  const hooks: AdmissionHooks = {
    async validate(attrs) {
      calls++;
      await quotas.listShared!(ctx(attrs.namespace, { readFence: attrs.readFence }), {});
    },
  };
  await configmaps.create(ctx('opt', { admission: hooks, dryRun: true }), cm('dry'));
  assert.equal(calls, 1);
  assert.equal(await configmaps.getShared!(ctx('opt'), 'dry', {}), null);
});
