// The scheduling.k8s.io group's resources.

import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { priorityClassStrategy } from './priorityclass.js';

export const schedulingProvider = groupProvider('scheduling.k8s.io', [
  { key: 'scheduling.k8s.io/priorityclasses', strategy: priorityClassStrategy, table: columns.priorityClasses },
]);
