// PersistentVolumeClaimResize (kube's plugin/pkg/admission/storage/persistentvolume/resize):
// a claim's storage request may grow only once it is Bound and only when its StorageClass
// (the same before and after) sets allowVolumeExpansion. Shrinking is the registry's
// validation (`field can not be less than ...`), not this plugin's.

import type { KubeObject } from '../../../storage/interface.js';
import { asObject } from '../../registry/object.js';
import { compareQuantities, parseQuantity, type Quantity } from '../../machinery/quantity.js';
import type { AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { annotation, forbidden, getObject, groupResource } from './shared.js';

function requestedStorage(pvc: KubeObject): Quantity {
  const v = asObject(asObject(asObject(pvc.spec).resources).requests).storage;
  try {
    return parseQuantity(typeof v === 'string' || typeof v === 'number' ? v : '0');
  } catch {
    return parseQuantity('0');
  }
}

/** kube's GetPersistentVolumeClaimClass: the beta annotation wins over the field */
function claimClass(pvc: KubeObject): string {
  const beta = annotation(pvc, 'volume.beta.kubernetes.io/storage-class');
  if (beta !== undefined) return beta;
  const name = asObject(pvc.spec).storageClassName;
  return typeof name === 'string' ? name : '';
}

export const persistentVolumeClaimResize: AdmissionPluginFactory = {
  name: 'PersistentVolumeClaimResize',
  create(deps): AdmissionPlugin {
    return {
      name: 'PersistentVolumeClaimResize',
      handles: (attrs) => attrs.operation === 'UPDATE' && !attrs.subresource && groupResource(attrs) === '/persistentvolumeclaims',
      async validate(attrs) {
        const pvc = attrs.object;
        const old = attrs.oldObject;
        if (!pvc || !old) return;
        if (compareQuantities(requestedStorage(pvc), requestedStorage(old)) <= 0) return;
        if (asObject(old.status).phase !== 'Bound') throw forbidden(attrs, 'Only bound persistent volume claims can be expanded');
        const cls = claimClass(pvc);
        const oldCls = claimClass(old);
        let allowed = false;
        if (cls && cls === oldCls) {
          const sc = await getObject(deps.resolver, 'storage.k8s.io', 'v1', 'storageclasses', cls);
          allowed = sc?.allowVolumeExpansion === true;
        }
        if (!allowed) {
          throw forbidden(
            attrs,
            'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
          );
        }
      },
    };
  },
};
