// The storage.k8s.io group's resources.

import { genericStrategy, groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { storageClassStrategy } from './storageclass.js';

export const storageProvider = groupProvider('storage.k8s.io', [
  { key: 'storage.k8s.io/csidrivers', strategy: genericStrategy(), table: columns.csiDrivers },
  { key: 'storage.k8s.io/csinodes', strategy: genericStrategy(), table: columns.csiNodes },
  { key: 'storage.k8s.io/csistoragecapacities', strategy: genericStrategy() },
  { key: 'storage.k8s.io/storageclasses', strategy: storageClassStrategy, table: columns.storageClasses },
  { key: 'storage.k8s.io/volumeattachments', strategy: genericStrategy(), table: columns.volumeAttachments },
  { key: 'storage.k8s.io/volumeattributesclasses', strategy: genericStrategy() },
]);
