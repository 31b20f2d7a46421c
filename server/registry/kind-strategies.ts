// The strategies of the built-in kinds whose defaulting and validation live in their group
// folders (policy, networking, coordination, discovery, storage, scheduling, node and the
// smaller core kinds; RBAC's live with its escalation checks in rbac/strategies.ts), and what every built-in kind gets on top of its own strategy: resource
// quantities in canonical form, and core's finalizer-name rule.

import type { ResourceKey } from '../apis/generated/resource-keys.js';
import { loadSchemas } from '../apis/schema.js';
import type { ResourceInfo } from '../apis/types.js';
import { storageKindOf } from './conversion/index.js';
import { leaseStrategy } from './coordination/lease.js';
import { eventStrategy } from './core/events.js';
import { endpointsStrategy, limitRangeStrategy, podTemplateStrategy, resourceQuotaStrategy, serviceAccountStrategy } from './core/misc.js';
import { endpointSliceStrategy } from './discovery/endpointslice.js';
import { ingressClassStrategy, ingressStrategy } from './networking/ingress.js';
import { networkPolicyStrategy } from './networking/networkpolicy.js';
import { runtimeClassStrategy } from './node/runtimeclass.js';
import { podDisruptionBudgetStrategy } from './policy/pdb.js';
import { quantityCanonicalizerFor } from './quantity-fields.js';
import { priorityClassStrategy } from './scheduling/priorityclass.js';
import { storageClassStrategy } from './storage/storageclass.js';
import type { ResourceStrategy } from './strategy.js';
import { fieldErrors, type FieldError } from '../machinery/validation/field-error.js';
import { isQualifiedName } from '../machinery/validation/names.js';
import type { KubeObject } from '../../storage/interface.js';
import { crdStrategy } from '../crd/crd-strategy.js';
import { admissionRegistrationStrategies } from './admissionregistration/strategies.js';
import { flowControlStrategies } from './flowcontrol/strategies.js';

const factories: Partial<Record<ResourceKey, () => ResourceStrategy>> = {
  '/events': eventStrategy,
  '/endpoints': endpointsStrategy,
  '/serviceaccounts': serviceAccountStrategy,
  '/podtemplates': podTemplateStrategy,
  '/limitranges': limitRangeStrategy,
  '/resourcequotas': resourceQuotaStrategy,
  'policy/poddisruptionbudgets': podDisruptionBudgetStrategy,
  'networking.k8s.io/networkpolicies': networkPolicyStrategy,
  'networking.k8s.io/ingresses': ingressStrategy,
  'networking.k8s.io/ingressclasses': ingressClassStrategy,
  'coordination.k8s.io/leases': leaseStrategy,
  'discovery.k8s.io/endpointslices': endpointSliceStrategy,
  'storage.k8s.io/storageclasses': storageClassStrategy,
  'scheduling.k8s.io/priorityclasses': priorityClassStrategy,
  'node.k8s.io/runtimeclasses': runtimeClassStrategy,
  'apiextensions.k8s.io/customresourcedefinitions': crdStrategy,
  ...admissionRegistrationStrategies,
  ...flowControlStrategies,
};

/** the strategy of `<group>/<resource>` when one of the group folders defines it */
export function kindStrategyFor(key: string): ResourceStrategy | undefined {
  // custom resources and unknown keys have none
  return factories[key as ResourceKey]?.();
}

const standardFinalizers = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** core's validateKubeFinalizerName, per finalizer (on top of the generic list check) */
export function validateKubeFinalizerNames(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  (obj.metadata.finalizers ?? []).forEach((raw, i) => {
    const f = typeof raw === 'string' ? raw : String(raw);
    const path = `metadata.finalizers[${i}]`;
    const msgs = isQualifiedName(f);
    for (const m of msgs) errs.push(fieldErrors.invalid(path, f, m));
    if (!msgs.length && !f.includes('/') && !standardFinalizers.has(f)) {
      errs.push(fieldErrors.invalid(path, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}

/** kinds validated without core's ObjectMeta rules (legacy Events) */
// (and CRDs: apiextensions validates metadata with apimachinery's rules, which take any
// qualified finalizer name, e.g. customresourcecleanup.apiextensions.k8s.io)
const withoutKubeObjectMeta = new Set<ResourceKey>(['/events', 'apiextensions.k8s.io/customresourcedefinitions']);

/** wraps a built-in kind's strategy: canonical quantities after defaulting, core's finalizer
 *  names in validation */
export function builtinKindStrategy(info: ResourceInfo, base: ResourceStrategy): ResourceStrategy {
  const storage = storageKindOf(info);
  const schemas = loadSchemas();
  const canonicalize = quantityCanonicalizerFor(schemas, storage.group, storage.version, storage.kind);
  const key = `${storage.group}/${info.resource}`;
  // custom resources (no generated schema) follow the generic metadata rules only
  const kubeMeta = !withoutKubeObjectMeta.has(key as ResourceKey) && schemas.schemaFor(storage.group, storage.version, storage.kind) !== undefined;
  return {
    ...base,
    applyDefaults(obj, c) {
      base.applyDefaults(obj, c);
      canonicalize?.(obj as Record<string, unknown>);
    },
    validate(obj, c) {
      const errs = base.validate(obj, c);
      return kubeMeta ? [...errs, ...validateKubeFinalizerNames(obj)] : errs;
    },
    validateUpdate(obj, old, c) {
      const errs = base.validateUpdate(obj, old, c);
      return kubeMeta ? [...errs, ...validateKubeFinalizerNames(obj)] : errs;
    },
  };
}
