// The MutatingAdmissionPolicy admission plugin (alpha in kube 1.33: it acts only with the
// MutatingAdmissionPolicy feature gate on and admissionregistration.k8s.io/v1alpha1 served).
// Like the validating one, every replica follows policies and bindings with its own
// watch-fed informers and reads namespaces and params through the registry per request.

import type { KubeObject } from '../../../../storage/interface.js';
import { loadSchemas } from '../../../apis/schema.js';
import { startInformer } from '../../../authz/informer.js';
import { TypeModel } from '../../../fieldmanager/schema.js';
import type { AdmissionAttributes } from '../../../registry/rest.js';
import type { AdmissionPlugin, AdmissionPluginFactory, AdmissionRequestContext } from '../../plugin.js';
import { policyEnvironment, policyLogger, waitForInformers } from '../plugin.js';
import { policiesWithBindings } from '../pairing.js';
import { MutatingPolicyCache } from './compiled.js';
import { dispatchMutations, type MutatingEnvironment, type MutatingPolicyHook } from './dispatcher.js';
import type { MutatingBindingObject, MutatingPolicyObject } from './types.js';

const GROUP = 'admissionregistration.k8s.io';
const VERSION = 'v1alpha1';
export const MUTATING_POLICY_PLUGIN = 'MutatingAdmissionPolicy';

export const mutatingAdmissionPolicyFactory: AdmissionPluginFactory = {
  name: MUTATING_POLICY_PLUGIN,
  create(deps): AdmissionPlugin {
    const policiesRest = deps.resolver.lookup(GROUP, VERSION, 'mutatingadmissionpolicies');
    const bindingsRest = deps.resolver.lookup(GROUP, VERSION, 'mutatingadmissionpolicybindings');
    // inert, as kube's plugin is, without its gate or its API
    if (!deps.featureGates[MUTATING_POLICY_PLUGIN] || !policiesRest || !bindingsRest)
      return { name: MUTATING_POLICY_PLUGIN, handles: () => false };
    const log = policyLogger(deps.log, 'mutating-admission-policy');
    const policies = startInformer(policiesRest, log, deps.signal);
    const bindings = startInformer(bindingsRest, log, deps.signal);
    const cache = new MutatingPolicyCache();
    const types = new TypeModel(loadSchemas());
    const env: MutatingEnvironment = {
      ...policyEnvironment(deps),
      typeOfKind: (group, version, kind) => types.typeOfKind(group, version, kind),
    };

    const hooks = (): MutatingPolicyHook[] =>
      policiesWithBindings(
        policies.list() as unknown as MutatingPolicyObject[],
        bindings.list() as unknown as MutatingBindingObject[],
        cache,
      );

    return {
      name: MUTATING_POLICY_PLUGIN,
      readsOptions: true,
      handles: () => !bindings.hasSynced || bindings.list().length > 0,
      async mutate(attrs: AdmissionAttributes, _ctx: AdmissionRequestContext): Promise<KubeObject> {
        await waitForInformers([policies, bindings], attrs);
        const active = hooks();
        if (active.length === 0 || !attrs.object) return attrs.object as KubeObject;
        const result = await dispatchMutations(active, attrs, env);
        if (result.denial) throw result.denial;
        return result.object;
      },
    };
  },
};
