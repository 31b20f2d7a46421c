// PersistentVolumes and PersistentVolumeClaims: the defaults clients see (phase Pending,
// volumeMode Filesystem, reclaim policy Retain); DELETE answers with the object.

import { ensureObject, isObject } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';

export function persistentVolumeStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    hasStatusSubresource: true,
    returnDeletedObject: true,
    initialStatus: () => ({ phase: 'Pending' }),
    applyDefaults(obj) {
      if (!isObject(obj.spec)) return;
      obj.spec.persistentVolumeReclaimPolicy ??= 'Retain';
      obj.spec.volumeMode ??= 'Filesystem';
    },
  });
}

export function persistentVolumeClaimStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    returnDeletedObject: true,
    initialStatus: () => ({ phase: 'Pending' }),
    applyDefaults(obj) {
      const spec = ensureObject(obj, 'spec');
      spec.volumeMode ??= 'Filesystem';
    },
  });
}
