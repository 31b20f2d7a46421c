// The protection controllers over a real registry on real etcd: a claim being deleted keeps
// its finalizer while a running pod uses it and loses it once the pod is gone; an unbound
// volume being deleted loses its finalizer at once.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../storage/interface.js';
import { ctx, registryOverWatchCache, startRegistry, type RegistryHarness } from '../registry/testing/harness.js';
import { startInformer } from '../authz/informer.js';
import {
  ClaimsBeingDeleted,
  claimsOfPod,
  podInformerOptions,
  pvcProtectionFinalizer,
  pvProtectionFinalizer,
  runStorageProtectionController,
} from './storage-protection.js';
import { eventually } from './testing/harness.js';
import { silentLogger } from './types.js';

for (const watchCache of [false, true])
  describe(`storage protection controller${watchCache ? ' over the watch cache' : ''}`, () => {
    let h: RegistryHarness;
    const stop = new AbortController();
    let running: Promise<void>;
    before(async () => {
      h = await startRegistry({}, { watchCache });
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
      await eventually('the unused claim to go', gone(pvcs, 'sp', 'free'));
      const held = await pvcs.get(ctx('sp'), 'data', {});
      assert.deepEqual(held.metadata.finalizers, [pvcProtectionFinalizer]);
      assert.ok(held.metadata.deletionTimestamp);

      await pods.delete(ctx('sp'), 'user', { gracePeriodSeconds: 0 });
      await eventually('the claim to go once its pod is gone', gone(pvcs, 'sp', 'data'));
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
      await eventually('the volume to go', gone(pvs, '', 'vol'));
    });
  });

describe('storage protection pods informer over the watch cache', () => {
  const suite = registryOverWatchCache();

  const claim = (ns: string, name: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns, finalizers: [pvcProtectionFinalizer] },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const podUsing = (ns: string, name: string, claimName: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { containers: [{ name: 'c', image: 'nginx' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName } }] },
  });

  it('watches pods whole only in namespaces where a protected claim is being deleted', async () => {
    const pods = suite.h.rest('', 'v1', 'pods');
    const pvcs = suite.h.rest('', 'v1', 'persistentvolumeclaims');
    for (const name of ['deleting', 'calm']) {
      await suite.h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      await pvcs.create(ctx(name), claim(name, 'data'));
    }
    // held by its finalizer while being deleted (no controller runs here)
    await pvcs.delete(ctx('deleting'), 'data', {});
    const claims = startInformer(pvcs, silentLogger, suite.signal);
    const beingDeleted = new ClaimsBeingDeleted(claims);
    await claims.synced;
    assert.equal(beingDeleted.in('deleting'), true);
    assert.equal(beingDeleted.in('calm'), false);
    const informer = startInformer(pods, silentLogger, suite.signal, podInformerOptions(beingDeleted));
    await informer.synced;
    // once the informer has a pod made after its list, its watch is registered with the cache
    await pods.create(ctx('deleting'), podUsing('deleting', 'first', 'data'));
    await eventually('the informer to see the first pod', async () => informer.get('deleting', 'first'));

    for (const ns of ['deleting', 'calm']) await pods.create(ctx(ns), podUsing(ns, 'user', 'data'));
    const watched = await eventually('the pod where a claim is being deleted', async () => informer.get('deleting', 'user'));
    const elsewhere = await eventually('the pod in the other namespace', async () => informer.get('calm', 'user'));
    assert.deepEqual(claimsOfPod(watched), ['data']);
    // kept from its metadata alone: its volumes were never decoded
    assert.deepEqual(claimsOfPod(elsewhere), []);
    assert.deepEqual(claimsOfPod(await pods.get(ctx('calm'), 'user', {})), ['data']);

    // a claim that starts being deleted turns its namespace's pods whole from then on
    await pvcs.delete(ctx('calm'), 'data', {});
    await eventually('the claim to be seen deleting', async () => (beingDeleted.in('calm') ? true : undefined));
    await pods.create(ctx('calm'), podUsing('calm', 'later', 'data'));
    const later = await eventually('the later pod', async () => informer.get('calm', 'later'));
    assert.deepEqual(claimsOfPod(later), ['data']);
    informer.stop();
    claims.stop();
  });
});
