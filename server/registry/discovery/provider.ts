// The discovery.k8s.io group's resources.

import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { endpointSliceStrategy } from './endpointslice.js';

export const discoveryProvider = groupProvider('discovery.k8s.io', [
  { key: 'discovery.k8s.io/endpointslices', strategy: endpointSliceStrategy, table: columns.endpointSlices },
]);
