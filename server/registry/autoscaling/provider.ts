// The autoscaling group's resources.

import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/workloads.js';
import { hpaStrategy } from './hpa.js';

export const autoscalingProvider = groupProvider('autoscaling', [
  { key: 'autoscaling/horizontalpodautoscalers', strategy: hpaStrategy, table: columns.horizontalPodAutoscalers },
]);
