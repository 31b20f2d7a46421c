// ResourceQuota admission and the quota controller over a real registry on real etcd:
// kube's refusals, charges written to status.used, concurrent charges through two
// "replicas" never overrunning a quota, and the controller giving usage back.

import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import { StatusError } from '../../machinery/status.js';
import { silentLogger } from '../../controllers/types.js';
import { runResourceQuotaController, syncQuota } from '../../controllers/resource-quota.js';
import { ctx, startRegistry, type RegistryHarness } from '../../registry/testing/harness.js';
import { limitedResourcesOf, resourceQuotaPlugin } from './resource-quota.js';
import { admit, attrsFor } from './test-helpers.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps' };
const pods = { group: '', version: 'v1', resource: 'pods' };

const cm = (ns: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { a: 'b' },
});

function pod(ns: string, name: string, resources?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { containers: [{ name: 'app', image: 'nginx', ...(resources ? { resources } : {}) }] },
  };
}

describe('ResourceQuota', () => {
  let h: RegistryHarness;
  const stop = new AbortController();
  setMaxListeners(50, stop.signal);
  before(async () => {
    h = await startRegistry();
  });
  after(async () => {
    stop.abort();
    await h.close();
  });

  async function namespace(name: string): Promise<void> {
    await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  async function quota(ns: string, name: string, hard: Record<string, string>): Promise<KubeObject> {
    const q = await h
      .rest('', 'v1', 'resourcequotas')
      .create(ctx(ns), { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace: ns }, spec: { hard } });
    await syncQuota(h.registry, q);
    return h.rest('', 'v1', 'resourcequotas').get(ctx(ns), name, {});
  }
  const used = async (ns: string, name: string) =>
    (await h.rest('', 'v1', 'resourcequotas').get(ctx(ns), name, {})).status as {
      used?: Record<string, string>;
      hard?: Record<string, string>;
    };

  /** admission then the write, as a create through the API goes */
  async function create(plugin: ReturnType<typeof resourceQuotaPlugin>, gvr: typeof configmaps, obj: KubeObject): Promise<void> {
    await admit(plugin, attrsFor(h.registry, gvr, 'CREATE', obj));
    await h.rest(gvr.group, gvr.version, gvr.resource).create(ctx(obj.metadata.namespace ?? ''), obj);
  }

  it('the controller fills status.hard and status.used; admission charges and refuses with kube messages', async () => {
    await namespace('q1');
    await h.rest('', 'v1', 'configmaps').create(ctx('q1'), cm('q1', 'c1'));
    const q = await quota('q1', 'q', { configmaps: '2', 'count/secrets': '5' });
    assert.deepEqual(q.status, { hard: { configmaps: '2', 'count/secrets': '5' }, used: { configmaps: '1', 'count/secrets': '0' } });

    const plugin = resourceQuotaPlugin(h.registry, stop.signal);
    await create(plugin, configmaps, cm('q1', 'c2'));
    assert.equal((await used('q1', 'q')).used?.configmaps, '2');
    const err = await create(plugin, configmaps, cm('q1', 'c3')).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(err.code, 403);
    assert.equal(
      err.message,
      'configmaps "c3" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2',
    );
    // a dry run is checked but not charged
    await admit(
      plugin,
      attrsFor(
        h.registry,
        { group: '', version: 'v1', resource: 'secrets' },
        'CREATE',
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'q1' } },
        null,
        { dryRun: true },
      ),
    );
    assert.equal((await used('q1', 'q')).used?.['count/secrets'], '0');
  });

  it('pods: the must-specify refusal, compute requests charged and refused over the limit', async () => {
    await namespace('q2');
    await quota('q2', 'compute', { pods: '5', 'requests.cpu': '1', 'limits.memory': '1Gi' });
    const plugin = resourceQuotaPlugin(h.registry, stop.signal);
    let err = await create(plugin, pods, pod('q2', 'bare')).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(
      err.message,
      'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: app; requests.cpu for: app',
    );

    const sized = { requests: { cpu: '600m' }, limits: { memory: '512Mi' } };
    await create(plugin, pods, pod('q2', 'p1', sized));
    assert.deepEqual((await used('q2', 'compute')).used, { 'limits.memory': '512Mi', pods: '1', 'requests.cpu': '600m' });
    err = await create(plugin, pods, pod('q2', 'p2', sized)).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(
      err.message,
      'pods "p2" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1',
    );
  });

  it('concurrent charges through two replicas never overrun the quota', async () => {
    await namespace('q3');
    await quota('q3', 'few', { configmaps: '5' });
    const a = resourceQuotaPlugin(h.registry, stop.signal);
    const b = resourceQuotaPlugin(h.registry, stop.signal);
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => create(i % 2 ? a : b, configmaps, cm('q3', `c${i}`))));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(r.reason instanceof StatusError && [403, 409].includes(r.reason.code), String(r.reason));
    }
    assert.ok(ok <= 5, `${ok} creates got through a quota of 5`);
    assert.ok(ok >= 1);
    assert.equal((await used('q3', 'few')).used?.configmaps, String(ok));
    const stored = await h.rest('', 'v1', 'configmaps').list(ctx('q3'), {});
    assert.equal(stored.items.length, ok);
  });

  it('limitedResources: consuming them needs a covering quota', async () => {
    await namespace('q5');
    const plugin = resourceQuotaPlugin(
      h.registry,
      stop.signal,
      limitedResourcesOf({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'ResourceQuotaConfiguration',
        limitedResources: [{ resource: 'pods', matchContains: ['requests.cpu'] }],
      }),
    );
    const cpu = { requests: { cpu: '100m' } };
    const err = await create(plugin, pods, pod('q5', 'wants-cpu', cpu)).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(err.message, 'pods "wants-cpu" is forbidden: insufficient quota to consume: requests.cpu');
    await create(plugin, pods, pod('q5', 'no-cpu'));
    await quota('q5', 'cpu', { 'requests.cpu': '1' });
    await create(plugin, pods, pod('q5', 'wants-cpu', cpu));
    assert.equal((await used('q5', 'cpu')).used?.['requests.cpu'], '100m');
  });

  it('the controller recomputes usage when objects go away (also of resources counted as count/<resource>.<group>)', async () => {
    await namespace('q4');
    await h.rest('', 'v1', 'configmaps').create(ctx('q4'), cm('q4', 'x'));
    await h.rest('', 'v1', 'configmaps').create(ctx('q4'), cm('q4', 'y'));
    const leases = h.rest('coordination.k8s.io', 'v1', 'leases');
    await leases.create(ctx('q4'), {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l', namespace: 'q4' },
      spec: {},
    });
    await h.rest('', 'v1', 'resourcequotas').create(ctx('q4'), {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q', namespace: 'q4' },
      spec: { hard: { configmaps: '10', 'count/leases.coordination.k8s.io': '5' } },
    });
    const running = runResourceQuotaController(h.registry, stop.signal, silentLogger, { resyncPeriodMs: 3_600_000 });
    const until = async (want: Record<string, string>) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const got = (await used('q4', 'q')).used;
        if (JSON.stringify(got) === JSON.stringify(want)) return;
        assert.ok(Date.now() < deadline, `status.used stayed ${JSON.stringify(got)}, wanted ${JSON.stringify(want)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await until({ configmaps: '2', 'count/leases.coordination.k8s.io': '1' });
    await h.rest('', 'v1', 'configmaps').delete(ctx('q4'), 'x', {});
    await until({ configmaps: '1', 'count/leases.coordination.k8s.io': '1' });
    await leases.delete(ctx('q4'), 'l', {});
    await until({ configmaps: '1', 'count/leases.coordination.k8s.io': '0' });
    stop.abort();
    await running;
  });
});
