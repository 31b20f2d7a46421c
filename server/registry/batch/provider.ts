// The batch group's resources.

import { fieldCount, fieldLabels, fieldObject } from '../../selectors/field-sets.js';
import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/workloads.js';
import { cronJobStrategy, jobStrategy } from './jobs.js';

/** Jobs and CronJobs accept the same labels; kube's message names the kind */
const jobFieldLabels = (kind: string) =>
  fieldLabels(['metadata.name', 'metadata.namespace', 'status.successful'], {}, (l) => `field label "${l}" not supported for "${kind}"`);

export const batchProvider = groupProvider('batch', [
  { key: 'batch/cronjobs', strategy: cronJobStrategy, fieldLabels: jobFieldLabels('CronJob'), table: columns.cronJobs },
  {
    key: 'batch/jobs',
    strategy: jobStrategy,
    fieldLabels: jobFieldLabels('Job'),
    selectableFields: (o) => ({ 'status.successful': fieldCount(fieldObject(o.status).succeeded) }),
    table: columns.jobs,
  },
]);
