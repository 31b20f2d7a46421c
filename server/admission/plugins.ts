// Every admission plugin kapi implements, by kube-apiserver's name. The chain (./chain.ts)
// picks the enabled ones and runs them in kube's order (./order.ts). A plugin named on the
// command line that is not here is a start-up error, as an unknown plugin is for kube.
// Add a plugin with one import and one entry below.

import type { AdmissionPluginFactory } from './plugin.js';
import { podSecurityFactory } from './pod-security/plugin.js';
import { validatingAdmissionPolicyFactory } from './policy/plugin.js';
import { mutatingAdmissionPolicyFactory } from './policy/mutating/plugin.js';
import {
  certificateApproval,
  certificateSigning,
  certificateSubjectRestriction,
  clusterTrustBundleAttest,
} from './plugins/certificates.js';
import { defaultIngressClass } from './plugins/default-ingress-class.js';
import { defaultStorageClass } from './plugins/default-storage-class.js';
import { persistentVolumeClaimResize } from './plugins/persistent-volume-claim-resize.js';
import { resourceQuota } from './plugins/resource-quota.js';
import { storageObjectInUseProtection } from './plugins/storage-object-in-use-protection.js';
import { serviceAccountFactory } from './plugins/serviceaccount.js';
import { priorityFactory } from './plugins/priority.js';
import { defaultTolerationSecondsFactory } from './plugins/default-toleration-seconds.js';
import { limitRangerFactory } from './plugins/limit-ranger.js';
import { runtimeClassFactory } from './plugins/runtime-class.js';
import { taintNodesByConditionFactory } from './plugins/taint-nodes-by-condition.js';
import { nodeRestrictionFactory } from './plugins/node-restriction.js';
import { mutatingWebhookFactory, validatingWebhookFactory } from './webhook/plugins.js';
import { namespaceLifecycleFactory } from './namespace-lifecycle.js';

export const PLUGIN_FACTORIES: readonly AdmissionPluginFactory[] = [
  podSecurityFactory,
  validatingAdmissionPolicyFactory,
  mutatingAdmissionPolicyFactory,
  defaultStorageClass,
  storageObjectInUseProtection,
  persistentVolumeClaimResize,
  certificateApproval,
  certificateSigning,
  clusterTrustBundleAttest,
  certificateSubjectRestriction,
  defaultIngressClass,
  resourceQuota,
  serviceAccountFactory,
  priorityFactory,
  defaultTolerationSecondsFactory,
  limitRangerFactory,
  runtimeClassFactory,
  taintNodesByConditionFactory,
  nodeRestrictionFactory,
  mutatingWebhookFactory,
  validatingWebhookFactory,
  namespaceLifecycleFactory,
];
