// Builds the REST handlers for the catalog: one GenericStore per served resource version
// (with its kind's strategy), one per `status`/`finalize` subresource, a ScaleStore per
// `scale` subresource, and the virtual review resources. Versions of one resource share one
// Storage (one per key prefix, so main can put one cacher in front of each).

import type { ResourceKey } from '../apis/generated/resource-keys.js';
import type { Storage } from '../../storage/interface.js';
import { errors } from '../machinery/status.js';
import type { ResourceInfo } from '../apis/types.js';
import { selectableFieldsFor } from '../selectors/field-sets.js';
import { deploymentStrategy, daemonSetStrategy, replicaSetStrategy, statefulSetStrategy, workloadStatusStrategy } from './apps/workloads.js';
import { hpaStrategy } from './autoscaling/hpa.js';
import { csrApprovalStrategy, csrStatusStrategy, csrStrategy } from './certificates/csr.js';
import { cronJobStrategy, jobStrategy } from './batch/jobs.js';
import { configMapStrategy, secretStrategy } from './core/config.js';
import { namespaceFinalizeStrategy, namespaceStatusStrategy, namespaceStrategy, NamespaceStore } from './core/namespaces.js';
import { nodeStatusStrategy, nodeStrategy, replicationControllerStrategy } from './core/others.js';
import { podStatusStrategy, podStrategy } from './core/pods.js';
import { podEphemeralContainersStrategy, podResizeStrategy } from './core/pod-subresources.js';
import { persistentVolumeClaimStrategy, persistentVolumeStrategy } from './core/volumes.js';
import { PodBindingResource } from './core/binding.js';
import { PodEvictionResource } from './core/eviction.js';
import { serviceStatusStrategy, serviceStrategy, type ServiceIPAllocator } from './core/services.js';
import { keyPrefixFor, storageResourceOf } from './keys.js';
import { namespaceLookupFrom, type NamespaceLookup } from './namespace-lifecycle.js';
import type { ResourceResolver, RESTResource } from './rest.js';
import { ScaleStore } from './scale.js';
import { GenericStore, type StoreVerb } from './store.js';
import { defineStrategy, statusStrategy, type ResourceStrategy } from './strategy.js';
import { nameIsDNSSubdomain, nameIsPathSegment } from '../machinery/validation/names.js';
import { builtinKindStrategy, kindStrategyFor } from './kind-strategies.js';
import { ServiceAccountTokenResource, type ServiceAccountTokenOptions } from './core/serviceaccount-token.js';
import { virtualResourceFor, type ReviewAuthorizer, type RulesResolver, type TokenAuthenticator } from './virtual/reviews.js';
import { withEscalationChecks, type RbacResource } from './rbac/escalation-hooks.js';
import type { EscalationDeps } from '../authz/rbac/escalation.js';
import { rulesOf, type RoleRef } from '../authz/rbac/types.js';

export { keyPrefixFor } from './keys.js';

export interface RegistryOptions {
  resources: ResourceInfo[];
  /** the Storage for one key prefix (e.g. `/pods`); called once per prefix */
  storageFor: (keyPrefix: string) => Storage;
  serviceIPAllocator?: ServiceIPAllocator;
  now?: () => Date;
  /** answers access reviews; default: allow everything (AlwaysAllow) */
  authorizer?: ReviewAuthorizer;
  /** answers SelfSubjectRulesReviews; default: `*` everywhere */
  rulesResolver?: RulesResolver;
  /** answers TokenReviews; default: no token authenticates */
  tokenAuthenticator?: TokenAuthenticator;
  /** the TokenRequest subresource (`serviceaccounts/<name>/token`); not served without it */
  serviceAccountTokens?: ServiceAccountTokenOptions;
  /** RBAC escalation checks on role and binding writes; none without it (AlwaysAllow) */
  rbacEscalation?: EscalationDeps;
  /** --enable-garbage-collector (default true): false leaves the GC finalizers off deletes */
  garbageCollection?: boolean;
  /** --event-ttl in seconds (default an hour): Events get an etcd lease this long; 0: none */
  eventTTLSeconds?: number;
  /** --delete-collection-workers (default 1) */
  deleteCollectionWorkers?: number;
}

export interface Registry extends ResourceResolver {
  /** every storage key prefix in use, one per stored resource */
  keyPrefixes(): string[];
}

/** kinds whose metadata.generation counts spec changes, beyond those with a strategy here */
const generationTracked: ReadonlySet<string> = new Set<ResourceKey>([
  'policy/poddisruptionbudgets',
  'networking.k8s.io/networkpolicies',
  'networking.k8s.io/ingresses',
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingadmissionpolicies',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings',
  'admissionregistration.k8s.io/mutatingadmissionpolicies',
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings',
  'flowcontrol.apiserver.k8s.io/flowschemas',
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations',
  'apiextensions.k8s.io/customresourcedefinitions',
]);

/** kinds whose names only need to be path segments (RBAC; any CSR name goes) */
const pathSegmentNamed: ReadonlySet<string> = new Set<ResourceKey>([
  'rbac.authorization.k8s.io/roles',
  'rbac.authorization.k8s.io/clusterroles',
  'rbac.authorization.k8s.io/rolebindings',
  'rbac.authorization.k8s.io/clusterrolebindings',
  'certificates.k8s.io/certificatesigningrequests',
]);

/** kinds a PUT to a missing name creates (kube-apiserver's AllowCreateOnUpdate) */
const createOnUpdate: ReadonlySet<string> = new Set<ResourceKey>([
  '/events',
  '/endpoints',
  '/limitranges',
  '/serviceaccounts',
  'coordination.k8s.io/leases',
  'rbac.authorization.k8s.io/roles',
  'rbac.authorization.k8s.io/clusterroles',
  'rbac.authorization.k8s.io/rolebindings',
  'rbac.authorization.k8s.io/clusterrolebindings',
]);

function hasSubresource(info: ResourceInfo, name: string): boolean {
  return info.subresources.some((s) => s.name === name);
}

/** the strategy of a resource (shared by all its versions) */
export function strategyFor(info: ResourceInfo, deps: { serviceIPAllocator?: ServiceIPAllocator } = {}): ResourceStrategy {
  return builtinKindStrategy(info, baseStrategyFor(info, deps));
}

function baseStrategyFor(info: ResourceInfo, deps: { serviceIPAllocator?: ServiceIPAllocator }): ResourceStrategy {
  const s = storageResourceOf(info);
  const key = `${s.group}/${s.resource}`;
  const kindStrategy = kindStrategyFor(key);
  if (kindStrategy) return kindStrategy;
  switch (key) {
    case '/namespaces':
      return namespaceStrategy();
    case '/pods':
      return podStrategy();
    case '/services':
      return serviceStrategy(deps.serviceIPAllocator);
    case '/configmaps':
      return configMapStrategy();
    case '/secrets':
      return secretStrategy();
    case '/replicationcontrollers':
      return replicationControllerStrategy();
    case '/nodes':
      return nodeStrategy();
    case '/persistentvolumes':
      return persistentVolumeStrategy();
    case '/persistentvolumeclaims':
      return persistentVolumeClaimStrategy();
    case 'apps/deployments':
      return deploymentStrategy();
    case 'apps/replicasets':
      return replicaSetStrategy();
    case 'apps/statefulsets':
      return statefulSetStrategy();
    case 'apps/daemonsets':
      return daemonSetStrategy();
    case 'batch/jobs':
      return jobStrategy();
    case 'batch/cronjobs':
      return cronJobStrategy();
    case 'autoscaling/horizontalpodautoscalers':
      return hpaStrategy();
    case 'certificates.k8s.io/certificatesigningrequests':
      return csrStrategy();
    case 'apiregistration.k8s.io/apiservices':
      // kube's ValidateAPIService: any path segment, as long as it is `<version>.<group>`
      // (so the core group's APIService is `v1.`)
      return defineStrategy({
        namespaced: false,
        validateName: nameIsPathSegment,
        validateSpec: (obj) => {
          const spec = ((obj as { spec?: { group?: string; version?: string } }).spec ?? {}) as { group?: string; version?: string };
          const required = `${spec.version ?? ''}.${spec.group ?? ''}`;
          const name = obj.metadata.name ?? '';
          return name === required || name === '' ? [] : [{ type: 'FieldValueInvalid', field: 'metadata.name', badValue: name, detail: `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}` }];
        },
        hasStatusSubresource: true,
        tracksGeneration: generationTracked.has(key),
        allowCreateOnUpdate: createOnUpdate.has(key),
      });
    default:
      return defineStrategy({
        namespaced: info.namespaced,
        validateName: pathSegmentNamed.has(key) ? nameIsPathSegment : nameIsDNSSubdomain,
        hasStatusSubresource: hasSubresource(info, 'status'),
        tracksGeneration: generationTracked.has(key),
        allowCreateOnUpdate: createOnUpdate.has(key),
      });
  }
}

/** the strategy of `<resource>/status` */
export function statusStrategyFor(info: ResourceInfo, base: ResourceStrategy): ResourceStrategy {
  const s = storageResourceOf(info);
  switch (`${s.group}/${s.resource}`) {
    case '/namespaces':
      return namespaceStatusStrategy(base);
    case '/pods':
      return podStatusStrategy(base);
    case '/services':
      return serviceStatusStrategy(base);
    case '/nodes':
      return nodeStatusStrategy(base);
    case 'apps/deployments':
    case 'apps/replicasets':
    case 'apps/statefulsets':
    case 'apps/daemonsets':
      return workloadStatusStrategy(base);
    case 'certificates.k8s.io/certificatesigningrequests':
      return csrStatusStrategy(base);
    default:
      return statusStrategy(base);
  }
}

const readUpdate: ReadonlySet<StoreVerb> = new Set(['get', 'update']);
const updateOnly: ReadonlySet<StoreVerb> = new Set(['update']);

function handlerKey(group: string, version: string, resource: string, subresource?: string): string {
  return `${group}/${version}/${resource}${subresource ? '/' + subresource : ''}`;
}

export function createRegistry(opts: RegistryOptions): Registry {
  const now = opts.now ?? (() => new Date());
  const storages = new Map<string, Storage>();
  const storageFor = (prefix: string): Storage => {
    let s = storages.get(prefix);
    if (!s) {
      s = opts.storageFor(prefix);
      storages.set(prefix, s);
    }
    return s;
  };
  const hasNamespaces = opts.resources.some((r) => r.group === '' && r.resource === 'namespaces');
  let namespaces: NamespaceLookup | undefined;
  const namespaceLookup = (): NamespaceLookup | undefined => {
    if (!hasNamespaces) return undefined;
    namespaces ??= namespaceLookupFrom(storageFor('/namespaces'));
    return namespaces;
  };

  const handlers = new Map<string, RESTResource>();
  const strategies = new Map<string, ResourceStrategy>();
  // the role a binding names is read from storage, not a cache that may lag behind it
  const readRoleRules = async (ref: RoleRef, namespace: string) => {
    const resource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
    const store = handlers.get(handlerKey('rbac.authorization.k8s.io', 'v1', resource));
    if (!store) throw errors.notFound({ group: 'rbac.authorization.k8s.io', resource, name: ref.name });
    const ctx = { user: { username: 'system:apiserver', groups: ['system:masters'] }, namespace: ref.kind === 'Role' ? namespace : '', dryRun: false, fieldValidation: 'Ignore' as const, warnings: [] };
    return rulesOf(await store.get(ctx, ref.name, {}));
  };
  const rbacEscalation = opts.rbacEscalation ? { roleRules: readRoleRules, ...opts.rbacEscalation } : undefined;

  for (const info of opts.resources) {
    const virtual = virtualResourceFor(info, now, {
      authorizer: opts.authorizer,
      rules: opts.rulesResolver,
      tokens: opts.tokenAuthenticator,
    });
    if (virtual) {
      handlers.set(handlerKey(info.group, info.version, info.resource), virtual);
      continue;
    }
    const prefix = keyPrefixFor(info);
    let strategy = strategies.get(prefix);
    if (!strategy) {
      strategy = strategyFor(info, { serviceIPAllocator: opts.serviceIPAllocator });
      const sr = storageResourceOf(info);
      if (rbacEscalation && sr.group === 'rbac.authorization.k8s.io') strategy = withEscalationChecks(sr.resource as RbacResource, strategy, rbacEscalation);
      if (sr.group === '' && sr.resource === 'events' && opts.eventTTLSeconds !== undefined) strategy = { ...strategy, ttlSeconds: opts.eventTTLSeconds };
      strategies.set(prefix, strategy);
    }
    const storage = storageFor(prefix);
    const s = storageResourceOf(info);
    const fieldsOf = selectableFieldsFor(s.group, s.resource, info.namespaced);
    const common = { info, storage, fieldsOf, now, namespaces: info.namespaced ? namespaceLookup() : undefined, garbageCollection: opts.garbageCollection ?? true, deleteCollectionWorkers: opts.deleteCollectionWorkers };
    const isNamespaces = info.group === '' && info.resource === 'namespaces';
    const main = isNamespaces ? new NamespaceStore({ ...common, strategy }) : new GenericStore({ ...common, strategy });
    handlers.set(handlerKey(info.group, info.version, info.resource), main);

    for (const sub of info.subresources) {
      let handler: RESTResource | undefined;
      if (sub.name === 'status') {
        handler = new GenericStore({ ...common, subresource: 'status', strategy: statusStrategyFor(info, strategy), verbs: readUpdate });
      } else if (sub.name === 'scale') {
        handler = new ScaleStore(main);
      } else if (sub.name === 'binding' && info.group === '' && info.resource === 'pods') {
        handler = new PodBindingResource(main);
      } else if (sub.name === 'eviction' && info.group === '' && info.resource === 'pods') {
        const pdb = opts.resources.find((r) => r.group === 'policy' && r.resource === 'poddisruptionbudgets');
        handler = new PodEvictionResource(main, pdb ? storageFor(keyPrefixFor(pdb)) : undefined, pdb ? keyPrefixFor(pdb) : undefined);
      } else if (sub.name === 'approval' && info.group === 'certificates.k8s.io') {
        handler = new GenericStore({ ...common, subresource: 'approval', strategy: csrApprovalStrategy(strategy), verbs: readUpdate });
      } else if (sub.name === 'token' && info.group === '' && info.resource === 'serviceaccounts' && opts.serviceAccountTokens) {
        handler = new ServiceAccountTokenResource(
          info,
          (ctx, resource, name) => {
            const store = handlers.get(handlerKey('', 'v1', resource));
            if (!store) throw errors.notFound({ group: '', resource, name });
            return store.get({ ...ctx, namespace: resource === 'nodes' ? '' : ctx.namespace }, name, {});
          },
          opts.serviceAccountTokens,
        );
      } else if (sub.name === 'ephemeralcontainers' && info.group === '' && info.resource === 'pods') {
        handler = new GenericStore({ ...common, subresource: 'ephemeralcontainers', strategy: podEphemeralContainersStrategy(strategy), verbs: readUpdate });
      } else if (sub.name === 'resize' && info.group === '' && info.resource === 'pods') {
        handler = new GenericStore({ ...common, subresource: 'resize', strategy: podResizeStrategy(strategy), verbs: readUpdate });
      } else if (sub.name === 'finalize' && isNamespaces) {
        handler = new GenericStore({ ...common, subresource: 'finalize', strategy: namespaceFinalizeStrategy(strategy), verbs: updateOnly });
      }
      if (handler) handlers.set(handlerKey(info.group, info.version, info.resource, sub.name), handler);
    }
  }

  return {
    lookup: (group, version, resource, subresource) => handlers.get(handlerKey(group, version, resource, subresource)),
    all: () => [...handlers.values()],
    keyPrefixes: () => [...storages.keys()],
  };
}
