// The resource.k8s.io group's resources (dynamic resource allocation).

import { genericStrategy, groupProvider } from '../descriptor.js';

export const resourceProvider = groupProvider('resource.k8s.io', [
  { key: 'resource.k8s.io/deviceclasses', strategy: genericStrategy() },
  { key: 'resource.k8s.io/devicetaintrules', strategy: genericStrategy() },
  { key: 'resource.k8s.io/resourceclaims', strategy: genericStrategy() },
  { key: 'resource.k8s.io/resourceclaimtemplates', strategy: genericStrategy() },
  { key: 'resource.k8s.io/resourceslices', strategy: genericStrategy() },
]);
