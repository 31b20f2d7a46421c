// The networking.k8s.io group's resources.

import { genericStrategy, groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import { ingressClassStrategy, ingressStrategy } from './ingress.js';
import { networkPolicyStrategy } from './networkpolicy.js';

export const networkingProvider = groupProvider('networking.k8s.io', [
  { key: 'networking.k8s.io/ingressclasses', strategy: ingressClassStrategy, table: columns.ingressClasses },
  { key: 'networking.k8s.io/ingresses', strategy: ingressStrategy, table: columns.ingresses },
  { key: 'networking.k8s.io/ipaddresses', strategy: genericStrategy(), table: columns.ipAddresses },
  { key: 'networking.k8s.io/networkpolicies', strategy: networkPolicyStrategy, table: columns.networkPolicies },
  { key: 'networking.k8s.io/servicecidrs', strategy: genericStrategy(), table: columns.serviceCIDRs },
]);
