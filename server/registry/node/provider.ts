// The node.k8s.io group's resources.

import { fixed, groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { runtimeClassStrategy } from './runtimeclass.js';

export const nodeProvider = groupProvider('node.k8s.io', [
  { key: 'node.k8s.io/runtimeclasses', strategy: fixed(runtimeClassStrategy), table: columns.runtimeClasses },
]);
