// DefaultStorageClass, StorageObjectInUseProtection and PersistentVolumeClaimResize over a real
// registry on real etcd: classes are read from the registry as kube reads them from informers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import { ctx, startRegistry, type RegistryHarness } from '../../registry/testing/harness.js';
import { StatusError } from '../../machinery/status.js';
import { defaultStorageClass } from './default-storage-class.js';
import { persistentVolumeClaimResize } from './persistent-volume-claim-resize.js';
import { storageObjectInUseProtection } from './storage-object-in-use-protection.js';
import { admit, attrsFor, buildPlugin } from './test-helpers.js';

const pvcs = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
const pvs = { group: '', version: 'v1', resource: 'persistentvolumes' };

function claim(name: string, spec: Record<string, unknown> = {}, status: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
    status,
  };
}

async function storageClass(h: RegistryHarness, name: string, extra: Record<string, unknown> = {}, isDefault = false): Promise<void> {
  await h.rest('storage.k8s.io', 'v1', 'storageclasses').create(ctx(), {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
    provisioner: 'example.com/p',
    ...extra,
  });
}

describe('storage admission plugins', () => {
  let h: RegistryHarness;
  before(async () => {
    h = await startRegistry();
  });
  after(async () => {
    await h.close();
  });

  it('DefaultStorageClass: nothing without a default, then the newest default; a named or empty class stays', async () => {
    const plugin = await buildPlugin(defaultStorageClass, h.registry);
    const none = await admit(plugin, attrsFor(h.registry, pvcs, 'CREATE', claim('a')));
    assert.equal((none?.spec as Record<string, unknown>).storageClassName, undefined);

    await storageClass(h, 'plain');
    await storageClass(h, 'old-default', {}, true);
    // creationTimestamps have one-second resolution: make the second default surely newer
    await new Promise((r) => setTimeout(r, 1100));
    await storageClass(h, 'new-default', {}, true);

    const got = await admit(plugin, attrsFor(h.registry, pvcs, 'CREATE', claim('b')));
    assert.equal((got?.spec as Record<string, unknown>).storageClassName, 'new-default');

    const named = await admit(plugin, attrsFor(h.registry, pvcs, 'CREATE', claim('c', { storageClassName: 'plain' })));
    assert.equal((named?.spec as Record<string, unknown>).storageClassName, 'plain');
    const empty = await admit(plugin, attrsFor(h.registry, pvcs, 'CREATE', claim('d', { storageClassName: '' })));
    assert.equal((empty?.spec as Record<string, unknown>).storageClassName, '');
    const beta = claim('e');
    beta.metadata.annotations = { 'volume.beta.kubernetes.io/storage-class': 'plain' };
    const annotated = await admit(plugin, attrsFor(h.registry, pvcs, 'CREATE', beta));
    assert.equal((annotated?.spec as Record<string, unknown>).storageClassName, undefined);
    // updates are not defaulted
    assert.equal(plugin.handles?.(attrsFor(h.registry, pvcs, 'UPDATE', claim('f'), claim('f'))), false);
  });

  it('StorageObjectInUseProtection: the protection finalizers on new claims and volumes, once', async () => {
    const plugin = await buildPlugin(storageObjectInUseProtection, h.registry);
    const c = await admit(plugin, attrsFor(h.registry, pvcs, 'CREATE', claim('p', {}, {})));
    assert.deepEqual(c?.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    const again = await admit(plugin, attrsFor(h.registry, pvcs, 'CREATE', c));
    assert.deepEqual(again?.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    const pv: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'v', finalizers: ['x/y'] }, spec: {} };
    const v = await admit(plugin, attrsFor(h.registry, pvs, 'CREATE', pv));
    assert.deepEqual(v?.metadata.finalizers, ['x/y', 'kubernetes.io/pv-protection']);
  });

  it('PersistentVolumeClaimResize: growth needs a bound claim and an expandable class; shrinking is not its business', async () => {
    const plugin = await buildPlugin(persistentVolumeClaimResize, h.registry);
    await storageClass(h, 'grows', { allowVolumeExpansion: true });
    await storageClass(h, 'fixed');
    const bigger = (c: KubeObject): KubeObject => ({ ...c, spec: { ...(c.spec as object), resources: { requests: { storage: '2Gi' } } } });

    const pending = claim('r1', { storageClassName: 'grows' }, { phase: 'Pending' });
    let err = await admit(plugin, attrsFor(h.registry, pvcs, 'UPDATE', bigger(pending), pending)).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(err.code, 403);
    assert.equal(err.message, 'persistentvolumeclaims "r1" is forbidden: Only bound persistent volume claims can be expanded');

    const fixed = claim('r2', { storageClassName: 'fixed' }, { phase: 'Bound' });
    err = await admit(plugin, attrsFor(h.registry, pvcs, 'UPDATE', bigger(fixed), fixed)).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(
      err.message,
      'persistentvolumeclaims "r2" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
    );

    const grows = claim('r3', { storageClassName: 'grows' }, { phase: 'Bound' });
    const ok = await admit(plugin, attrsFor(h.registry, pvcs, 'UPDATE', bigger(grows), grows));
    assert.equal(ok?.metadata.name, 'r3');
    // the same size, or a smaller one, is left to the registry's validation
    await admit(plugin, attrsFor(h.registry, pvcs, 'UPDATE', fixed, bigger(fixed)));
  });
});
