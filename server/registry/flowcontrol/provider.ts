// The flowcontrol.apiserver.k8s.io group's resources.

import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { flowSchemaStrategy, priorityLevelConfigurationStrategy } from './strategies.js';

export const flowControlProvider = groupProvider('flowcontrol.apiserver.k8s.io', [
  { key: 'flowcontrol.apiserver.k8s.io/flowschemas', strategy: flowSchemaStrategy, table: columns.flowSchemas },
  {
    key: 'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations',
    strategy: priorityLevelConfigurationStrategy,
    table: columns.priorityLevels,
  },
]);
