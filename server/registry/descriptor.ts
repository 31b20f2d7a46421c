// One descriptor per built-in resource: everything that differs from one resource to the
// next (its strategy and its status strategy, which carry the name rule and create-on-update,
// its field selectors, its Table columns, what its status writes keep, its store and its
// subresources), in one place. Each API group lists its resources' descriptors in its
// provider (`<group>/provider.ts`), as kube's RESTStorageProvider per group calls each
// resource's NewREST; providers.ts collects the providers. Descriptors are keyed by the
// generated catalog's ResourceKey, so a misspelt key does not compile, and providers.ts does
// not compile while a resource of the catalog has no descriptor.

import type { Storage } from '../../storage/interface.js';
import type { ResourceKey } from '../apis/generated/resource-keys.js';
import type { ResourceInfo } from '../apis/types.js';
import type { FieldLabelConverter, ObjectFields } from '../selectors/field-sets.js';
import { nameIsDNSSubdomain } from '../machinery/validation/names.js';
import type { TableConvertor } from './printers/table-convertor.js';
import type { RegistryOptions } from './registry.js';
import type { RESTResource } from './rest.js';
import type { GenericStore, GenericStoreConfig } from './store.js';
import { defineStrategy, type ResourceStrategy, type StrategyOptions } from './strategy.js';

/** the registry's dependencies a descriptor may build on (authorizers, allocators, flags) */
export type RegistryDeps = Omit<RegistryOptions, 'resources' | 'storageFor'>;

/** what a descriptor builds its handlers from */
export interface DescriptorContext {
  /** the version being built (a resource's strategy is built once, from its first version) */
  readonly info: ResourceInfo;
  readonly options: RegistryDeps;
  /** the registry's clock (RegistryOptions.now, else the wall clock) */
  readonly now: () => Date;
  /** a handler of this registry, looked up when a request needs it (all exist by then) */
  readonly handler: (group: string, version: string, resource: string) => RESTResource | undefined;
}

/** what a subresource's handler is built from: the resource's own store and its parts */
export interface SubresourceContext extends DescriptorContext {
  readonly main: GenericStore;
  readonly strategy: ResourceStrategy;
  /** the configuration `main` was built with, for a store of the subresource */
  readonly config: Omit<GenericStoreConfig, 'strategy'>;
  /** every resource the registry serves */
  readonly resources: readonly ResourceInfo[];
  /** the Storage of a key prefix, shared with every other resource stored under it */
  readonly storageFor: (keyPrefix: string) => Storage;
}

/** a subresource's handler; undefined when it is not served (a dependency is missing) */
export type SubresourceFactory = (c: SubresourceContext) => RESTResource | undefined;

interface DescriptorBase<K extends ResourceKey> {
  readonly key: K;
  /** the request's field labels (kube's field label conversion); default metadata.name and
   *  metadata.namespace */
  readonly fieldLabels?: FieldLabelConverter;
  /** `kubectl get` columns; default Name and Created At */
  readonly table?: TableConvertor;
}

/** a resource stored in etcd through a GenericStore */
export interface StoredResourceDescriptor<K extends ResourceKey = ResourceKey> extends DescriptorBase<K> {
  /** the strategy shared by every version (and by every resource stored under its prefix);
   *  a group folder's strategy function that needs nothing from the registry fits as it is */
  readonly strategy: (c: DescriptorContext) => ResourceStrategy;
  /** the strategy of `<resource>/status`; default the generic one over `strategy` */
  readonly statusStrategy?: (base: ResourceStrategy) => ResourceStrategy;
  /** the fields a stored object offers field selectors beyond its metadata */
  readonly selectableFields?: ObjectFields;
  /** status writes keep the stored labels (kube's reset fields) */
  readonly statusKeepsLabels?: boolean;
  /** false: validated without core's finalizer-name rule (legacy Events, CRDs) */
  readonly kubeFinalizerNames?: boolean;
  /** the store of the resource itself; default a GenericStore */
  readonly store?: (config: GenericStoreConfig) => GenericStore;
  /** handlers of subresources other than `status` and `scale`, which every resource gets */
  readonly subresources?: Readonly<Record<string, SubresourceFactory>>;
}

/** a resource answered without storage (the review resources) */
export interface VirtualResourceDescriptor<K extends ResourceKey = ResourceKey> extends DescriptorBase<K> {
  readonly serve: (c: DescriptorContext) => RESTResource;
}

export type ResourceDescriptor<K extends ResourceKey = ResourceKey> = StoredResourceDescriptor<K> | VirtualResourceDescriptor<K>;

export function isVirtual(d: ResourceDescriptor): d is VirtualResourceDescriptor {
  return 'serve' in d;
}

/** the resources of one API group */
export interface GroupProvider<K extends ResourceKey = ResourceKey> {
  readonly group: string;
  readonly resources: readonly ResourceDescriptor<K>[];
}

/** the group of a ResourceKey: `apps` of `apps/deployments`, '' of `/pods` */
type GroupOf<K extends string> = K extends `${infer G}/${string}` ? G : never;

/** a group's provider; a descriptor of another group's resource does not compile */
export function groupProvider<G extends string, K extends ResourceKey>(
  group: G & GroupOf<K>,
  resources: readonly ResourceDescriptor<K>[],
): GroupProvider<K> {
  return { group, resources };
}

/** what the generic strategy of a resource without its own may say */
export type GenericStrategyOptions = Pick<StrategyOptions, 'validateName' | 'allowCreateOnUpdate'>;

/** the strategy of a resource with no behaviour of its own: scope and status from the catalog,
 *  DNS-subdomain names unless `o` says otherwise, no create on update */
export function genericStrategy(o: GenericStrategyOptions = {}): (c: DescriptorContext) => ResourceStrategy {
  return ({ info }) =>
    defineStrategy({
      namespaced: info.namespaced,
      validateName: o.validateName ?? nameIsDNSSubdomain,
      hasStatusSubresource: info.subresources.some((s) => s.name === 'status'),
      tracksGeneration: false,
      allowCreateOnUpdate: o.allowCreateOnUpdate ?? false,
    });
}
