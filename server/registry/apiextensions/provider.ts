// The apiextensions.k8s.io group's resources. The CRD strategy lives with the rest of the CRD
// code in server/crd (schemas, CEL, conversion), which this reaches up to.

import { crdStrategy } from '../../crd/crd-strategy.js';
import { groupProvider } from '../descriptor.js';

export const apiExtensionsProvider = groupProvider('apiextensions.k8s.io', [
  // apiextensions validates metadata with apimachinery's rules, which take any qualified
  // finalizer name (e.g. customresourcecleanup.apiextensions.k8s.io)
  { key: 'apiextensions.k8s.io/customresourcedefinitions', strategy: crdStrategy, kubeFinalizerNames: false },
]);
