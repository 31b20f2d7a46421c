// The quota controller over the watch cache, as the server runs it: pods are watched whole only
// in namespaces that have a quota, and usage is still given back there when a pod ends or goes.

import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../storage/interface.js';
import { startInformer, type Informer } from '../authz/informer.js';
import { ctx, startRegistry, type RegistryHarness } from '../registry/testing/harness.js';
import { replenishingInformerOptions, runResourceQuotaController } from './resource-quota.js';
import { eventually } from './testing/harness.js';
import { silentLogger } from './types.js';

const pod = (ns: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns },
  spec: { containers: [{ name: 'app', image: 'nginx' }] },
});

describe('resource quota controller over the watch cache', () => {
  let h: RegistryHarness;
  const stop = new AbortController();
  setMaxListeners(100, stop.signal);
  before(async () => {
    h = await startRegistry({}, { watchCache: true });
    for (const name of ['with-quota', 'no-quota']) {
      await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    await h.rest('', 'v1', 'resourcequotas').create(ctx('with-quota'), {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q', namespace: 'with-quota' },
      spec: { hard: { pods: '10' } },
    });
  });
  after(async () => {
    stop.abort();
    await h.close();
  });

  it('watches pods whole only in namespaces with a quota', async () => {
    const quotas = startInformer(h.rest('', 'v1', 'resourcequotas'), silentLogger, stop.signal);
    await quotas.synced;
    const pods: Informer = startInformer(h.rest('', 'v1', 'pods'), silentLogger, stop.signal, replenishingInformerOptions('pods', quotas));
    await pods.synced;
    // once the informer has a pod made after its list, its watch is registered with the cache
    await h.rest('', 'v1', 'pods').create(ctx('with-quota'), pod('with-quota', 'first'));
    await eventually('the informer to see the first pod', async () => pods.get('with-quota', 'first'));

    for (const ns of ['with-quota', 'no-quota']) await h.rest('', 'v1', 'pods').create(ctx(ns), pod(ns, 'p'));
    const counted = await eventually('the pod in the quota namespace', async () => pods.get('with-quota', 'p'));
    const elsewhere = await eventually('the pod in the other namespace', async () => pods.get('no-quota', 'p'));
    const stored = await h.rest('', 'v1', 'pods').get(ctx('no-quota'), 'p', {});
    assert.equal((stored.status as { phase?: string }).phase, 'Pending');
    assert.equal((counted.status as { phase?: string }).phase, 'Pending');
    // kept from its metadata alone: the phase was never decoded
    assert.equal((elsewhere.status as { phase?: string } | undefined)?.phase, undefined);
    assert.equal(elsewhere.metadata.resourceVersion, stored.metadata.resourceVersion);
    pods.stop();
    quotas.stop();
  });

  it('gives usage back when a pod in a quota namespace ends or is deleted', async () => {
    const podsRest = h.rest('', 'v1', 'pods');
    const usedPods = async () => {
      const q = await h.rest('', 'v1', 'resourcequotas').get(ctx('with-quota'), 'q', {});
      return (q.status as { used?: Record<string, string> } | undefined)?.used?.pods;
    };
    const usage = (want: string) => eventually(`used pods ${want}`, async () => ((await usedPods()) === want ? true : undefined));
    // 'first' and 'p' from the test before, then two more; before the controller starts, as
    // its first sync counts them (creates are charged by admission, which this registry has
    // not: a create after that sync would not be counted)
    await podsRest.create(ctx('with-quota'), pod('with-quota', 'ends'));
    await podsRest.create(ctx('with-quota'), pod('with-quota', 'goes'));
    await podsRest.create(ctx('no-quota'), pod('no-quota', 'other'));
    const running = runResourceQuotaController(h.registry, stop.signal, silentLogger, { resyncPeriodMs: 3_600_000 });
    await usage('4');
    await h
      .rest('', 'v1', 'pods', 'status')
      .update(ctx('with-quota'), 'ends', (cur) => ({ ...cur!, status: { ...(cur!.status as object), phase: 'Succeeded' } }), {
        allowCreate: false,
      });
    await usage('3');
    await podsRest.delete(ctx('with-quota'), 'goes', { gracePeriodSeconds: 0 });
    await usage('2');
    stop.abort();
    await running;
  });
});
