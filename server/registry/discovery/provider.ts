// The discovery.k8s.io group's resources.

import { fixed, groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { endpointSliceStrategy } from './endpointslice.js';

export const discoveryProvider = groupProvider('discovery.k8s.io', [
  { key: 'discovery.k8s.io/endpointslices', strategy: fixed(endpointSliceStrategy), table: columns.endpointSlices },
]);
