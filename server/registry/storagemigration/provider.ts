// The storagemigration.k8s.io group's resources.

import { genericStrategy, groupProvider } from '../descriptor.js';

export const storageMigrationProvider = groupProvider('storagemigration.k8s.io', [
  { key: 'storagemigration.k8s.io/storageversionmigrations', strategy: genericStrategy() },
]);
