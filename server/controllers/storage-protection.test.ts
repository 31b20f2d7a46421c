// The protection controllers over a real registry on real etcd: a claim being deleted keeps
// its finalizer while a running pod uses it and loses it once the pod is gone; an unbound
// volume being deleted loses its finalizer at once.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../storage/interface.js';
import { ctx, startRegistry, type RegistryHarness } from '../registry/testing/harness.js';
import { pvcProtectionFinalizer, pvProtectionFinalizer, runStorageProtectionController } from './storage-protection.js';
import { silentLogger } from './types.js';

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('storage protection controller', () => {
  let h: RegistryHarness;
  const stop = new AbortController();
  let running: Promise<void>;
  before(async () => {
    h = await startRegistry();
    running = runStorageProtectionController(h.registry, stop.signal, silentLogger);
  });
  after(async () => {
    stop.abort();
    await running;
    await h.close();
  });

  const gone = (rest: ReturnType<RegistryHarness['rest']>, ns: string, name: string) => async () => {
    try {
      await rest.get(ctx(ns), name, {});
      return undefined;
    } catch (err) {
      return (err as { code?: number }).code === 404 ? true : undefined;
    }
  };

  it('a claim in use by a pod stays until the pod is gone', async () => {
    await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sp' } });
    const pvcs = h.rest('', 'v1', 'persistentvolumeclaims');
    const pods = h.rest('', 'v1', 'pods');
    await pvcs.create(ctx('sp'), {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'sp', finalizers: [pvcProtectionFinalizer] },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'user', namespace: 'sp' },
      spec: { containers: [{ name: 'c', image: 'nginx' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] },
    };
    await pods.create(ctx('sp'), pod);
    const res = await pvcs.delete(ctx('sp'), 'data', {});
    assert.equal(res.deleted, false);
    // the controller has looked at it (and left it) once a later unrelated claim is processed
    await pvcs.create(ctx('sp'), {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'free', namespace: 'sp', finalizers: [pvcProtectionFinalizer] },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await pvcs.delete(ctx('sp'), 'free', {});
    await until('the unused claim to go', gone(pvcs, 'sp', 'free'));
    const held = await pvcs.get(ctx('sp'), 'data', {});
    assert.deepEqual(held.metadata.finalizers, [pvcProtectionFinalizer]);
    assert.ok(held.metadata.deletionTimestamp);

    await pods.delete(ctx('sp'), 'user', { gracePeriodSeconds: 0 });
    await until('the claim to go once its pod is gone', gone(pvcs, 'sp', 'data'));
  });

  it('an unbound volume being deleted loses its finalizer', async () => {
    const pvs = h.rest('', 'v1', 'persistentvolumes');
    await pvs.create(ctx(), {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'vol', finalizers: [pvProtectionFinalizer] },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
    });
    await pvs.delete(ctx(), 'vol', {});
    await until('the volume to go', gone(pvs, '', 'vol'));
  });
});
