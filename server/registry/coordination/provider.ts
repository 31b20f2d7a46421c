// The coordination.k8s.io group's resources.

import { genericStrategy, groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { leaseStrategy } from './lease.js';

export const coordinationProvider = groupProvider('coordination.k8s.io', [
  { key: 'coordination.k8s.io/leasecandidates', strategy: genericStrategy(), table: columns.leaseCandidates },
  { key: 'coordination.k8s.io/leases', strategy: leaseStrategy, table: columns.leases },
]);
