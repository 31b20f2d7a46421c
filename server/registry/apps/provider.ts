// The apps group's resources.

import { fieldCount, fieldLabels, fieldObject } from '../../selectors/field-sets.js';
import { genericStrategy, groupProvider } from '../descriptor.js';
import * as columns from '../printers/workloads.js';
import { daemonSetStrategy, deploymentStrategy, replicaSetStrategy, statefulSetStrategy, workloadStatusStrategy } from './workloads.js';

export const appsProvider = groupProvider('apps', [
  { key: 'apps/controllerrevisions', strategy: genericStrategy(), table: columns.controllerRevisions },
  {
    key: 'apps/daemonsets',
    strategy: daemonSetStrategy,
    statusStrategy: workloadStatusStrategy,
    statusKeepsLabels: true,
    table: columns.daemonSets,
  },
  {
    key: 'apps/deployments',
    strategy: deploymentStrategy,
    statusStrategy: workloadStatusStrategy,
    statusKeepsLabels: true,
    table: columns.deployments,
  },
  {
    key: 'apps/replicasets',
    strategy: replicaSetStrategy,
    statusStrategy: workloadStatusStrategy,
    statusKeepsLabels: true,
    fieldLabels: fieldLabels(['metadata.name', 'metadata.namespace', 'status.replicas']),
    selectableFields: (o) => ({ 'status.replicas': fieldCount(fieldObject(o.status).replicas) }),
    table: columns.replicaSets,
  },
  {
    key: 'apps/statefulsets',
    strategy: statefulSetStrategy,
    statusStrategy: workloadStatusStrategy,
    statusKeepsLabels: true,
    table: columns.statefulSets,
  },
]);
