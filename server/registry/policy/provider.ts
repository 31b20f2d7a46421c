// The policy group's resources.

import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/workloads.js';
import { podDisruptionBudgetStrategy } from './pdb.js';

export const policyProvider = groupProvider('policy', [
  { key: 'policy/poddisruptionbudgets', strategy: podDisruptionBudgetStrategy, table: columns.podDisruptionBudgets },
]);
