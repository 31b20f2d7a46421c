// DefaultStorageClass (kube's plugin/pkg/admission/storage/storageclass/setdefault): a new
// PersistentVolumeClaim that names no class (no spec.storageClassName, no beta annotation)
// gets the cluster's default StorageClass, the newest one when several are marked default.
// `storageClassName: ""` is a choice (no class) and is left alone.

import type { KubeObject } from '../../../storage/interface.js';
import { asObject } from '../../registry/object.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { annotation, groupResource, listAll, newestDefault } from './shared.js';

const betaClassAnnotation = 'volume.beta.kubernetes.io/storage-class';

export function isDefaultStorageClass(sc: KubeObject): boolean {
  return (
    annotation(sc, 'storageclass.kubernetes.io/is-default-class') === 'true' ||
    annotation(sc, 'storageclass.beta.kubernetes.io/is-default-class') === 'true'
  );
}

function claimHasClass(pvc: KubeObject): boolean {
  if (annotation(pvc, betaClassAnnotation) !== undefined) return true;
  const name = asObject(pvc.spec).storageClassName;
  return name !== undefined && name !== null;
}

export const defaultStorageClass: AdmissionPluginFactory = {
  name: 'DefaultStorageClass',
  create(deps): AdmissionPlugin {
    return {
      name: 'DefaultStorageClass',
      handles: (attrs: AdmissionAttributes) =>
        attrs.operation === 'CREATE' && !attrs.subresource && groupResource(attrs) === '/persistentvolumeclaims',
      async mutate(attrs, ctx) {
        const pvc = attrs.object;
        if (!pvc || claimHasClass(pvc)) return pvc as KubeObject;
        const classes = await listAll(deps.resolver, 'storage.k8s.io', 'v1', 'storageclasses', '', ctx.cancellation?.signal);
        const def = newestDefault(classes, isDefaultStorageClass);
        if (!def) return pvc;
        const spec = asObject(pvc.spec);
        pvc.spec = { ...spec, storageClassName: def.metadata.name };
        return pvc;
      },
    };
  },
};
