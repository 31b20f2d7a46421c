// The strategies of admissionregistration.k8s.io's webhook configurations, policies and
// policy bindings: cluster-scoped, generation counting spec changes, v1 defaults and kube's
// validation (update validation with the relaxations for what was already stored). Policies
// have a status subresource: a create starts with an empty status and main-resource updates
// keep the stored one.

import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { validateObjectMetaUpdate } from '../validation/object-meta.js';
import {
  defaultMutatingAdmissionPolicy,
  defaultMutatingAdmissionPolicyBinding,
  validateMutatingAdmissionPolicy,
  validateMutatingAdmissionPolicyBinding,
} from './mutating-policies.js';
import { defaultValidatingAdmissionPolicy, defaultValidatingAdmissionPolicyBinding, defaultWebhookConfiguration } from './defaults.js';
import {
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
  validateWebhookConfiguration,
  validateWebhookConfigurationUpdate,
} from './validation.js';

function webhookConfigurationStrategy(mutating: boolean): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    tracksGeneration: true,
    applyDefaults: (obj) => defaultWebhookConfiguration(obj, mutating),
    validateSpec: (obj) => validateWebhookConfiguration(obj, mutating),
    validateUpdate: (obj, old) => [
      ...validateObjectMetaUpdate(obj.metadata, old.metadata),
      ...validateWebhookConfigurationUpdate(obj, old, mutating),
    ],
  });
}

export function mutatingWebhookConfigurationStrategy(): ResourceStrategy {
  return webhookConfigurationStrategy(true);
}

export function validatingWebhookConfigurationStrategy(): ResourceStrategy {
  return webhookConfigurationStrategy(false);
}

export function validatingAdmissionPolicyStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    tracksGeneration: true,
    hasStatusSubresource: true,
    applyDefaults: defaultValidatingAdmissionPolicy,
    validateSpec: (obj) => validateValidatingAdmissionPolicy(obj),
    validateUpdate: (obj, old) => [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateValidatingAdmissionPolicy(obj, old)],
  });
}

export function validatingAdmissionPolicyBindingStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    tracksGeneration: true,
    applyDefaults: defaultValidatingAdmissionPolicyBinding,
    validateSpec: validateValidatingAdmissionPolicyBinding,
  });
}

export function mutatingAdmissionPolicyStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    tracksGeneration: true,
    applyDefaults: defaultMutatingAdmissionPolicy,
    validateSpec: (obj) => validateMutatingAdmissionPolicy(obj),
    validateUpdate: (obj, old) => [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateMutatingAdmissionPolicy(obj, old)],
  });
}

export function mutatingAdmissionPolicyBindingStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    tracksGeneration: true,
    applyDefaults: defaultMutatingAdmissionPolicyBinding,
    validateSpec: validateMutatingAdmissionPolicyBinding,
  });
}
