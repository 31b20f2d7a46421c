// The admissionregistration.k8s.io group's resources.

import { groupProvider } from '../descriptor.js';
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
  {
    key: 'admissionregistration.k8s.io/mutatingadmissionpolicies',
    strategy: mutatingAdmissionPolicyStrategy,
    table: columns.mutatingAdmissionPolicies,
  },
  {
    key: 'admissionregistration.k8s.io/mutatingadmissionpolicybindings',
    strategy: mutatingAdmissionPolicyBindingStrategy,
    table: columns.mutatingAdmissionPolicyBindings,
  },
  {
    key: 'admissionregistration.k8s.io/mutatingwebhookconfigurations',
    strategy: mutatingWebhookConfigurationStrategy,
    table: columns.mutatingWebhookConfigurations,
  },
  {
    key: 'admissionregistration.k8s.io/validatingadmissionpolicies',
    strategy: validatingAdmissionPolicyStrategy,
    table: columns.validatingAdmissionPolicies,
  },
  {
    key: 'admissionregistration.k8s.io/validatingadmissionpolicybindings',
    strategy: validatingAdmissionPolicyBindingStrategy,
    table: columns.validatingAdmissionPolicyBindings,
  },
  {
    key: 'admissionregistration.k8s.io/validatingwebhookconfigurations',
    strategy: validatingWebhookConfigurationStrategy,
    table: columns.validatingWebhookConfigurations,
  },
]);
