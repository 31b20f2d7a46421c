// The policy group's resources.

import { fixed, groupProvider } from '../descriptor.js';
import * as columns from '../printers/workloads.js';
import { podDisruptionBudgetStrategy } from './pdb.js';

export const policyProvider = groupProvider('policy', [
  { key: 'policy/poddisruptionbudgets', strategy: fixed(podDisruptionBudgetStrategy), table: columns.podDisruptionBudgets },
]);
