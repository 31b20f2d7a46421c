// The ResourceQuota plugin in a create whose validating admission reads optimistically (the
// registry over the watch cache, the plugin in a chain): a quota its informer has not seen yet
// is read strictly and charged once, and a create retried because another lookup changed is
// not charged again.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import { syncQuota } from '../../controllers/resource-quota.js';
import { ctx, registryOverWatchCache } from '../../registry/testing/harness.js';
import { chainOf } from '../chain.js';
import type { AdmissionPlugin } from '../plugin.js';
import { resourceQuotaPlugin } from './resource-quota.js';

describe('ResourceQuota with optimistic lookups', () => {
  const suite = registryOverWatchCache();

  async function namespaceWithQuota(ns: string): Promise<void> {
    await suite.h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const q = await suite.h.rest('', 'v1', 'resourcequotas').create(ctx(ns), {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q', namespace: ns },
      spec: { hard: { configmaps: '5' } },
    });
    await syncQuota(suite.h.registry, q);
    // consistent reads: the cache holds the namespace and the filled quota from here on
    await suite.h.rest('', 'v1', 'namespaces').get(ctx(), ns, {});
    await suite.h.rest('', 'v1', 'resourcequotas').get(ctx(ns), 'q', {});
  }

  const usedConfigMaps = async (ns: string) =>
    ((await suite.h.rest('', 'v1', 'resourcequotas').get(ctx(ns), 'q', {})).status as { used?: Record<string, string> }).used?.configmaps;

  const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

  function createThrough(plugins: AdmissionPlugin[], ns: string, name: string): Promise<KubeObject> {
    const admission = chainOf(plugins).hooksFor({ warnings: [] });
    return suite.h.rest('', 'v1', 'configmaps').create(ctx(ns, { admission }), cm(name));
  }

  it('a quota the informer has not seen: read strictly and charged once', async () => {
    await namespaceWithQuota('oq1');
    // a fresh plugin: its informer has not listed yet, so the lookup goes to the watch cache
    const made = await createThrough([resourceQuotaPlugin(suite.h.registry, suite.signal)], 'oq1', 'a');
    assert.equal(made.metadata.name, 'a');
    assert.equal(await usedConfigMaps('oq1'), '1');
  });

  it('a create retried because another lookup changed is charged once', async () => {
    await namespaceWithQuota('oq2');
    let rounds = 0;
    // looks at the namespace's LimitRanges through the fence, and the first time makes one
    // appear before the create is written: the create's condition on them fails
    const racer: AdmissionPlugin = {
      name: 'Racer',
      async validate(attrs, admissionCtx) {
        rounds++;
        const limitRanges = suite.h.rest('', 'v1', 'limitranges');
        await limitRanges.listShared!(ctx(attrs.namespace, { readFence: admissionCtx.readFence }), {});
        if (rounds === 1) {
          await limitRanges.create(ctx(attrs.namespace), {
            apiVersion: 'v1',
            kind: 'LimitRange',
            metadata: { name: 'lr' },
            spec: { limits: [] },
          });
        }
      },
    };
    const quota = resourceQuotaPlugin(suite.h.registry, suite.signal);
    const made = await createThrough([racer, quota], 'oq2', 'b');
    assert.equal(made.metadata.name, 'b');
    assert.equal(rounds, 2, 'validating admission ran again after the failed condition');
    assert.equal(await usedConfigMaps('oq2'), '1');
  });
});
