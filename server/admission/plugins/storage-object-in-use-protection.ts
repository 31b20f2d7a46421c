// StorageObjectInUseProtection (kube's plugin/pkg/admission/storage/storageobjectinuseprotection):
// every new PersistentVolumeClaim gets the `kubernetes.io/pvc-protection` finalizer and every
// new PersistentVolume `kubernetes.io/pv-protection`, so neither goes away while in use (the
// protection controllers remove them).

import type { KubeObject } from '../../../storage/interface.js';
import type { AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { groupResource } from './shared.js';

const finalizerFor: Record<string, string> = {
  '/persistentvolumeclaims': 'kubernetes.io/pvc-protection',
  '/persistentvolumes': 'kubernetes.io/pv-protection',
};

export const storageObjectInUseProtection: AdmissionPluginFactory = {
  name: 'StorageObjectInUseProtection',
  create(): AdmissionPlugin {
    return {
      name: 'StorageObjectInUseProtection',
      handles: (attrs) => attrs.operation === 'CREATE' && !attrs.subresource && groupResource(attrs) in finalizerFor,
      mutate(attrs) {
        const obj = attrs.object as KubeObject;
        const finalizer = finalizerFor[groupResource(attrs)] as string;
        const finalizers = Array.isArray(obj.metadata.finalizers) ? (obj.metadata.finalizers as string[]) : [];
        if (finalizers.includes(finalizer)) return obj;
        obj.metadata.finalizers = [...finalizers, finalizer];
        return obj;
      },
    };
  },
};
