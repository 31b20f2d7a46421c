// The admissionregistration.k8s.io group's resources.

import { fixed, groupProvider } from '../descriptor.js';
import * as columns from '../printers/others.js';
import {
  mutatingAdmissionPolicyBindingStrategy,
  mutatingAdmissionPolicyStrategy,
  mutatingWebhookConfigurationStrategy,
  validatingAdmissionPolicyBindingStrategy,
  validatingAdmissionPolicyStrategy,
  validatingWebhookConfigurationStrategy,
} from './strategies.js';

export const admissionRegistrationProvider = groupProvider('admissionregistration.k8s.io', [
  { key: 'admissionregistration.k8s.io/mutatingadmissionpolicies', strategy: fixed(mutatingAdmissionPolicyStrategy), table: columns.mutatingAdmissionPolicies },
  {
    key: 'admissionregistration.k8s.io/mutatingadmissionpolicybindings',
    strategy: fixed(mutatingAdmissionPolicyBindingStrategy),
    table: columns.mutatingAdmissionPolicyBindings,
  },
  {
    key: 'admissionregistration.k8s.io/mutatingwebhookconfigurations',
    strategy: fixed(mutatingWebhookConfigurationStrategy),
    table: columns.mutatingWebhookConfigurations,
  },
  { key: 'admissionregistration.k8s.io/validatingadmissionpolicies', strategy: fixed(validatingAdmissionPolicyStrategy), table: columns.validatingAdmissionPolicies },
  {
    key: 'admissionregistration.k8s.io/validatingadmissionpolicybindings',
    strategy: fixed(validatingAdmissionPolicyBindingStrategy),
    table: columns.validatingAdmissionPolicyBindings,
  },
  {
    key: 'admissionregistration.k8s.io/validatingwebhookconfigurations',
    strategy: fixed(validatingWebhookConfigurationStrategy),
    table: columns.validatingWebhookConfigurations,
  },
]);
