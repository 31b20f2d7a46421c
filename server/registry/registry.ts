// Builds the REST handlers for the catalog from the resources' descriptors (providers.ts):
// one GenericStore per served resource version (with its strategy), one per `status`
// subresource, a ScaleStore per `scale` subresource, the handlers a descriptor gives its
// other subresources, and the virtual review resources. Versions of one resource share one
// Storage (one per key prefix, so main can put one cacher in front of each).

import type { Storage } from '../../storage/interface.js';
import type { ResourceInfo } from '../apis/types.js';
import { objectMetaFieldLabels, selectableFields } from '../selectors/field-sets.js';
import { builtinKindStrategy } from './builtin-strategy.js';
import type { ServiceAccountTokenOptions } from './core/serviceaccount-token.js';
import type { ServiceIPAllocator } from './core/services.js';
import { isVirtual, type DescriptorContext, type RegistryDeps, type StoredResourceDescriptor } from './descriptor.js';
import { keyPrefixFor } from './keys.js';
import { namespaceLookupFrom, type NamespaceLookup } from './namespace-lifecycle.js';
import { builtinDescriptors, type DescriptorIndex } from './providers.js';
import type { EscalationChecker } from './rbac/escalation-checker.js';
import type { ResourceResolver, RESTResource } from './rest.js';
import { ScaleStore } from './scale.js';
import { GenericStore, type StoreVerb } from './store.js';
import { statusStrategy, type ResourceStrategy } from './strategy.js';
import type { ReviewAuthorizer, RulesResolver, TokenAuthenticator } from './virtual/reviews.js';

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
  rbacEscalation?: EscalationChecker;
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

/** the descriptor of a resource served from storage; throws for a virtual one */
function storedDescriptor(descriptors: DescriptorIndex, info: ResourceInfo): StoredResourceDescriptor {
  const d = descriptors.require(info);
  if (isVirtual(d)) throw new Error(`${d.key} is not stored`);
  return d;
}

function strategyOf(d: StoredResourceDescriptor, c: DescriptorContext): ResourceStrategy {
  return builtinKindStrategy(c.info, d.strategy(c), d.kubeFinalizerNames ?? true);
}

/** the strategy of a resource (shared by all its versions), as the registry builds it */
export function strategyFor(info: ResourceInfo, deps: RegistryDeps = {}): ResourceStrategy {
  const c: DescriptorContext = { info, options: deps, now: deps.now ?? (() => new Date()), handler: () => undefined };
  return strategyOf(storedDescriptor(builtinDescriptors(), info), c);
}

const readUpdate: ReadonlySet<StoreVerb> = new Set(['get', 'update']);

function handlerKey(group: string, version: string, resource: string, subresource?: string): string {
  return `${group}/${version}/${resource}${subresource ? '/' + subresource : ''}`;
}

export function createRegistry(opts: RegistryOptions): Registry {
  const now = opts.now ?? (() => new Date());
  const descriptors = builtinDescriptors();
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
  const handler = (group: string, version: string, resource: string) => handlers.get(handlerKey(group, version, resource));
  const strategies = new Map<string, ResourceStrategy>();

  for (const info of opts.resources) {
    const descriptor = descriptors.require(info);
    const c: DescriptorContext = { info, options: opts, now, handler };
    if (isVirtual(descriptor)) {
      handlers.set(handlerKey(info.group, info.version, info.resource), descriptor.serve(c));
      continue;
    }
    // resources stored under one prefix (core and events.k8s.io Events) share one strategy
    const prefix = keyPrefixFor(info);
    let strategy = strategies.get(prefix);
    if (!strategy) {
      strategy = strategyOf(descriptor, c);
      strategies.set(prefix, strategy);
    }
    const config = {
      info,
      storage: storageFor(prefix),
      fieldsOf: selectableFields(info.namespaced, descriptor.selectableFields),
      fieldLabels: descriptor.fieldLabels ?? objectMetaFieldLabels,
      now,
      namespaces: info.namespaced ? namespaceLookup() : undefined,
      garbageCollection: opts.garbageCollection ?? true,
      deleteCollectionWorkers: opts.deleteCollectionWorkers,
    };
    const main = descriptor.store ? descriptor.store({ ...config, strategy }) : new GenericStore({ ...config, strategy });
    handlers.set(handlerKey(info.group, info.version, info.resource), main);

    for (const sub of info.subresources) {
      let sr: RESTResource | undefined;
      if (sub.name === 'status') {
        const status = descriptor.statusStrategy ? descriptor.statusStrategy(strategy) : statusStrategy(strategy);
        sr = new GenericStore({
          ...config,
          subresource: 'status',
          statusKeepsLabels: descriptor.statusKeepsLabels,
          strategy: status,
          verbs: readUpdate,
        });
      } else if (sub.name === 'scale') {
        sr = new ScaleStore(main);
      } else {
        sr = descriptor.subresources?.[sub.name]?.({ ...c, main, strategy, config, resources: opts.resources, storageFor });
      }
      if (sr) handlers.set(handlerKey(info.group, info.version, info.resource, sub.name), sr);
    }
  }

  return {
    lookup: (group, version, resource, subresource) => handlers.get(handlerKey(group, version, resource, subresource)),
    all: () => [...handlers.values()],
    keyPrefixes: () => [...storages.keys()],
  };
}
