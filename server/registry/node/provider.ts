// The node.k8s.io group's resources.

import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { runtimeClassStrategy } from './runtimeclass.js';

export const nodeProvider = groupProvider('node.k8s.io', [
  { key: 'node.k8s.io/runtimeclasses', strategy: runtimeClassStrategy, table: columns.runtimeClasses },
]);
