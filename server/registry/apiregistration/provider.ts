// The apiregistration.k8s.io group's resources.

import { nameIsPathSegment } from '../../machinery/validation/names.js';
import { groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';

/** kube's ValidateAPIService: any path segment, as long as it is `<version>.<group>` (so the
 *  core group's APIService is `v1.`) */
function apiServiceStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    validateName: nameIsPathSegment,
    validateSpec: (obj) => {
      const spec = ((obj as { spec?: { group?: string; version?: string } }).spec ?? {}) as { group?: string; version?: string };
      const required = `${spec.version ?? ''}.${spec.group ?? ''}`;
      const name = obj.metadata.name ?? '';
      return name === required || name === ''
        ? []
        : [
            {
              type: 'FieldValueInvalid',
              field: 'metadata.name',
              badValue: name,
              detail: `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`,
            },
          ];
    },
    hasStatusSubresource: true,
    tracksGeneration: false,
    allowCreateOnUpdate: false,
  });
}

export const apiRegistrationProvider = groupProvider('apiregistration.k8s.io', [
  { key: 'apiregistration.k8s.io/apiservices', strategy: apiServiceStrategy, table: columns.apiServices },
]);
