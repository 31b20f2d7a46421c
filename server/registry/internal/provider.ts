// The internal.apiserver.k8s.io group's resources.

import { genericStrategy, groupProvider } from '../descriptor.js';

export const internalProvider = groupProvider('internal.apiserver.k8s.io', [
  { key: 'internal.apiserver.k8s.io/storageversions', strategy: genericStrategy() },
]);
