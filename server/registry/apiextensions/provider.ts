// The apiextensions.k8s.io group's resources. The CRD strategy and the validation of CRD
// objects live beside it; server/crd serves the custom resources the CRDs define.

import { groupProvider } from '../descriptor.js';
import { crdStrategy } from './crd-strategy.js';

export const apiExtensionsProvider = groupProvider('apiextensions.k8s.io', [
  // apiextensions validates metadata with apimachinery's rules, which take any qualified
  // finalizer name (e.g. customresourcecleanup.apiextensions.k8s.io)
  { key: 'apiextensions.k8s.io/customresourcedefinitions', strategy: crdStrategy, kubeFinalizerNames: false },
]);
