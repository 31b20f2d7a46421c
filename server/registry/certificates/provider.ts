// The certificates.k8s.io group's resources.

import { fieldLabels, fieldObject, fieldText } from '../../selectors/field-sets.js';
import { genericStrategy, groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { GenericStore, type StoreVerb } from '../store.js';
import { csrApprovalStrategy, csrStatusStrategy, csrStrategy } from './csr.js';

const readUpdate: ReadonlySet<StoreVerb> = new Set(['get', 'update']);

export const certificatesProvider = groupProvider('certificates.k8s.io', [
  {
    key: 'certificates.k8s.io/certificatesigningrequests',
    strategy: csrStrategy,
    statusStrategy: csrStatusStrategy,
    fieldLabels: fieldLabels(['metadata.name', 'spec.signerName']),
    selectableFields: (o) => ({ 'spec.signerName': fieldText(fieldObject(o.spec).signerName) }),
    table: columns.certificateSigningRequests,
    subresources: {
      approval: ({ config, strategy }) =>
        new GenericStore({ ...config, subresource: 'approval', strategy: csrApprovalStrategy(strategy), verbs: readUpdate }),
    },
  },
  { key: 'certificates.k8s.io/clustertrustbundles', strategy: genericStrategy(), table: columns.clusterTrustBundles },
]);
