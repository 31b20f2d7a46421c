// The events.k8s.io group's resources. Its Events are core Events under the same keys
// (keys.ts), so they share core's strategy and are matched on core's fields; only the field
// labels a request may name, and the columns, are events.k8s.io's own.

import { fieldLabels } from '../../selectors/field-sets.js';
import { coreEventFields, eventStrategyOf } from '../core/provider.js';
import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';

export const eventsProvider = groupProvider('events.k8s.io', [
  {
    key: 'events.k8s.io/events',
    strategy: eventStrategyOf,
    kubeFinalizerNames: false,
    fieldLabels: fieldLabels([], {
      reason: 'reason',
      'regarding.kind': 'involvedObject.kind',
      'regarding.namespace': 'involvedObject.namespace',
      'regarding.name': 'involvedObject.name',
      'regarding.uid': 'involvedObject.uid',
      'regarding.apiVersion': 'involvedObject.apiVersion',
      'regarding.resourceVersion': 'involvedObject.resourceVersion',
      'regarding.fieldPath': 'involvedObject.fieldPath',
      reportingController: 'reportingComponent',
      type: 'type',
      'metadata.namespace': 'metadata.namespace',
      'metadata.name': 'metadata.name',
    }),
    selectableFields: coreEventFields,
    table: columns.eventsV1,
  },
]);
