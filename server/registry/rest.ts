// The seam between the HTTP endpoints (server/endpoints/, one file per verb) and the
// registry (server/registry/: a generic store configured by one strategy per resource).
// Endpoints decode, negotiate and stream; the registry decides what is stored.

import type { KubeObject, Preconditions, UnreadableDeletion, Watch } from '../../storage/interface.js';
import type { ReadFence } from '../../storage/read-fence.js';
import type { ResourceInfo } from '../apis/types.js';
import type { UserInfo } from '../machinery/user.js';

/** where a signal comes from: a request's cancellation (which makes its signal on demand), or
 *  `{ signal }` for work that has one already */
export interface SignalSource {
  readonly signal: AbortSignal;
  /** known without making the signal (a request's is made lazily) */
  readonly cancelled?: boolean;
}

export interface RequestContext {
  user: UserInfo;
  /** '' for cluster-scoped requests and all-namespace lists */
  namespace: string;
  /** dryRun=All */
  dryRun: boolean;
  fieldManager?: string;
  /** set by server-side apply, which records the applier's managedFields itself: the
   *  registry then records no Update entry for the write */
  managedFieldsRecorded?: boolean;
  /** strict/warn/ignore: what to do about unknown or duplicate fields */
  fieldValidation: 'Strict' | 'Warn' | 'Ignore';
  /** warnings to send back in `Warning` headers */
  warnings: string[];
  /** its signal aborts when the client goes away. A request's signal is made when first read
   *  (server/request/cancellation.ts), so it is read where work may wait on it, not before */
  cancellation?: SignalSource;
  /** consistent reads made through this context share one wait for etcd's revision (see
   *  storage/read-fence.ts): set by a caller that reads several times for one request */
  readFence?: ReadFence;
  /** the object name from the URL, for creates on a named subresource (`pods/x/binding`,
   *  `pods/x/eviction`, `serviceaccounts/x/token`), where the body need not carry it */
  name?: string;
  /** admission, run by the registry at kube-apiserver's points in the write path */
  admission?: AdmissionHooks;
  /** set when the object given to `create` is a freshly decoded request body that the caller
   *  never looks at again: the registry then works on it rather than on a deep copy */
  bodyHandedOver?: boolean;
  /** set when the transform given to `update` never looks at the object it is given and
   *  returns a fresh object on every call that nobody else holds (a PUT's body, copied per
   *  attempt): the registry then copies neither the current object for it nor its result */
  transformReplaces?: boolean;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** What admission sees of a write. Objects are in the request's group version. */
export interface AdmissionAttributes {
  operation: AdmissionOperation;
  resource: ResourceInfo;
  subresource?: string;
  namespace: string;
  /** '' for a create whose name is still to be generated */
  name: string;
  /** the object to be written; null for DELETE */
  object: KubeObject | null;
  /** the stored object; null for CREATE */
  oldObject: KubeObject | null;
  dryRun: boolean;
  user: UserInfo;
  /** the request's CreateOptions/UpdateOptions/DeleteOptions as sent to webhooks (with kind
   *  and apiVersion); the chain fills it from the request when the registry does not */
  options?: Record<string, unknown>;
  /** what the plugins' lookups read through: the write's own fence, whose optimistic reads
   *  become conditions of the write (storage/read-fence.ts); the chain has one per request
   *  when the registry gives none */
  readFence?: ReadFence;
}

/**
 * Admission as the registry calls it. `mutate` runs on the decoded, defaulted object before the
 * registry prepares and validates it (for updates: inside the read-modify-write, after the
 * transform); `validate` runs on the final object just before it is written, and on the
 * stored object before a delete.
 */
export interface AdmissionHooks {
  mutate?(attrs: AdmissionAttributes): Promise<KubeObject>;
  validate?(attrs: AdmissionAttributes): Promise<void>;
}

export interface GetRequestOptions {
  resourceVersion?: string;
}

export interface ListRequestOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  limit?: number;
  continue?: string;
  /** for the single-object watch/list form (`fieldSelector=metadata.name=x` or a name in the path) */
  name?: string;
}

export interface WatchRequestOptions extends ListRequestOptions {
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
  /** the watcher reads only kind, apiVersion and metadata (the informers inside the server):
   *  changes may come as objects of those alone. A function answers per changed object, as
   *  its change is delivered: true where the metadata is enough. */
  metadataOnly?: boolean | ((namespace: string, name: string) => boolean);
}

export interface DeleteRequestOptions {
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
}

/** The new object computed from the current one (null when absent): a PUT body ignores the
 *  current object, a patch applies itself to it. Called again if a concurrent write wins. */
export type ObjectTransform = (current: KubeObject | null) => KubeObject | Promise<KubeObject>;

export interface ListObject {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: KubeObject[];
}

/** A list read from storage, before it is written: as an object, or as JSON text edited from
 *  the stored texts. */
export interface PreparedList {
  /** the size of the stored texts of its items, what producing a response from it is
   *  estimated by */
  readonly storedBytes: number;
  /** the list with every item decoded and converted */
  toObject(): ListObject;
  /** the compact JSON of toObject() (Go's escapes, no trailing newline) in pieces, header
   *  first, each text or UTF-8 bytes (views of storage's own bytes, never to be modified);
   *  undefined when it cannot be had without decoding the items */
  jsonText(): Iterable<string | Uint8Array> | undefined;
  /** the protobuf form of toObject() in pieces, head first (each piece may be kept by a
   *  cache: never to be modified); undefined when it cannot be had in pieces */
  protobufPieces(): Uint8Array[] | undefined;
}

/** An object read by name, before it is written: as an object, or as JSON text edited from
 *  its stored text. */
export interface PreparedObject {
  /** the object decoded and converted, as get answers it */
  toObject(): KubeObject;
  /** the compact JSON of toObject() (Go's escapes) and Go's trailing newline, as UTF-8;
   *  undefined when it cannot be had without decoding the object */
  jsonBody(): Buffer | undefined;
  /** the protobuf form of toObject(); undefined when it cannot be had from kept item bytes */
  protobufBody(): Buffer | undefined;
}

/** One resource (or subresource) as the endpoints see it. Objects going in and out are in
 *  the request's group version (`info.version`); conversion is the registry's business. */
export interface RESTResource {
  readonly info: ResourceInfo;
  /** set for a subresource (`status`, `scale`) */
  readonly subresource?: string;
  /** a `status` endpoint that resets metadata.labels to the stored ones (kube's reset fields
   *  of the workload kinds' status strategies) */
  readonly statusKeepsLabels?: boolean;
  get(ctx: RequestContext, name: string, opts: GetRequestOptions): Promise<KubeObject>;
  /** get, for a reader that may write the object's stored text (optional) */
  openGet?(ctx: RequestContext, name: string, opts: GetRequestOptions): Promise<PreparedObject>;
  list(ctx: RequestContext, opts: ListRequestOptions): Promise<ListObject>;
  /** list() before it is built, for writers that can use the stored texts */
  openList?(ctx: RequestContext, opts: ListRequestOptions): Promise<PreparedList>;
  /** get(), for a reader that changes nothing: the object is shared and frozen, decoded once
   *  per stored version; null when there is none (optional) */
  getShared?(ctx: RequestContext, name: string, opts: GetRequestOptions): Promise<KubeObject | null>;
  /** list()'s items, for a reader that changes nothing, as getShared (optional) */
  listShared?(ctx: RequestContext, opts: ListRequestOptions): Promise<readonly KubeObject[]>;
  watch(ctx: RequestContext, opts: WatchRequestOptions): Promise<Watch>;
  create(ctx: RequestContext, obj: KubeObject): Promise<KubeObject>;
  /** PUT and PATCH. `created` is true when the object did not exist (PUT with create-on-update). */
  update(
    ctx: RequestContext,
    name: string,
    transform: ObjectTransform,
    opts: { allowCreate: boolean },
  ): Promise<{ object: KubeObject; created: boolean }>;
  /** `deleted` false means finalizers or graceful deletion keep the object (HTTP 202 for the
   *  latter as kube-apiserver answers; 200 with the object for finalizers). */
  delete(ctx: RequestContext, name: string, opts: DeleteRequestOptions): Promise<{ object: KubeObject; deleted: boolean }>;
  deleteCollection(ctx: RequestContext, opts: DeleteRequestOptions, list: ListRequestOptions): Promise<ListObject>;
  /** removes the object only if its stored value cannot be read (kube's unsafe deletion of
   *  corrupt objects); resources without storage of their own leave it out */
  deleteUnreadable?(ctx: RequestContext, name: string): Promise<UnreadableDeletion>;
}

/** Finds the REST handler for a request's group/version/resource[/subresource]. */
export interface ResourceResolver {
  lookup(group: string, version: string, resource: string, subresource?: string): RESTResource | undefined;
  /** every served resource, for discovery */
  all(): RESTResource[];
}
