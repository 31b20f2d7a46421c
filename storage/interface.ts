// The storage seam. Every implementation (the etcd3 store, the cacher in front of it) passes
// the one conformance suite in storage/testing. Keys are relative to the etcd prefix:
// `/pods/default/web-1`, `/apps/deployments/default/web`, `/namespaces/default`.
// Objects are plain decoded JSON; `metadata.resourceVersion` is filled from etcd's
// mod_revision on every read and never trusted on write.

import type { ReadCondition, ReadFence } from './read-fence.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** ObjectMeta's members in the order kube-apiserver writes them (clients compare bytes) */
export const OBJECT_META_ORDER: readonly string[] = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: JsonValue[];
  managedFields?: JsonValue[];
  [key: string]: unknown;
}

/** A decoded API object. Only `metadata` is typed; everything else is kind-specific. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Decides whether an object belongs in a list or watch. `isEverything` lets callers report
 *  `remainingItemCount` (only allowed when nothing is filtered). */
export interface SelectionPredicate {
  readonly isEverything: boolean;
  matches(obj: KubeObject): boolean;
  /** false when nothing stored under `key` can match, decided from the key alone (a name
   *  selector across namespaces): the watch cache then skips decoding the object */
  keyMayMatch?(key: string): boolean;
}

/** The compact JSON of objects a write handed back, where the store made it while encoding
 *  what it stored (JSON.stringify of that very object): an answer needs no second encoding.
 *  Whoever hands such an object on unchanged may remember the text for it too; an object is
 *  never changed after its text is remembered. */
const writtenJson = new WeakMap<KubeObject, string>();

export function rememberWrittenJson(obj: KubeObject, json: string): void {
  writtenJson.set(obj, json);
}

export function writtenJsonOf(obj: KubeObject): string | undefined {
  return writtenJson.get(obj);
}

export const everything: SelectionPredicate = { isEverything: true, matches: () => true };

export type ResourceVersionMatch = 'Exact' | 'NotOlderThan';

/** A request's work stops when its signal aborts (the client went away, or its deadline
 *  passed): waits end, reads are abandoned, retries are not made. A write already sent to
 *  etcd is left to finish, since it may have been applied. */
export interface Cancellable {
  /** may be a getter that makes the signal when first read: a store reads it only when it has
   *  to wait or to send it on (a request's signal costs to make, server/request/cancellation.ts) */
  readonly signal?: AbortSignal;
  /** whether the work is cancelled, answered without making a lazy signal; absent: ask the
   *  signal */
  readonly cancelled?: boolean;
}

/** throws the signal's reason when the work is cancelled; a lazy signal is made only then */
export function throwIfCancelled(c: Cancellable): void {
  if (c.cancelled === false) return;
  c.signal?.throwIfAborted();
}

/** A consistent read (no resourceVersion) through a fence is served at the revision the
 *  fence's reader first read at, or later (see read-fence.ts); stores that read etcd itself
 *  read its latest revision, as always. */
export interface Fenced {
  fence?: ReadFence;
}

export interface GetOptions extends Cancellable, Fenced {
  /** '' or undefined: most recent (consistent). '0': any. otherwise: not older than. */
  resourceVersion?: string;
  ignoreNotFound?: boolean;
}

export interface ListOptions extends Cancellable, Fenced {
  /** true for a collection prefix, false for exactly one key (single-object list/watch). */
  recursive: boolean;
  resourceVersion?: string;
  resourceVersionMatch?: ResourceVersionMatch;
  limit?: number;
  continue?: string;
  predicate: SelectionPredicate;
}

export interface ListResult {
  items: KubeObject[];
  /** the revision the list was read at */
  resourceVersion: string;
  /** '' when there is nothing more */
  continue: string;
  remainingItemCount?: number;
}

/** An object as storage holds it: the JSON text without `metadata.resourceVersion`, and the
 *  revision it was written at (which is its resourceVersion). */
export interface StoredObjectText {
  readonly key: string;
  /** the JSON text (a holder of bytes may decode it on every read: read it once per use) */
  readonly data: string;
  /** the size of the stored JSON in bytes, known without reading `data` */
  readonly size: number;
  /** the stored JSON's UTF-8 bytes, when the holder keeps them as bytes (never to be
   *  modified: they are the holder's own) */
  readonly bytes?: Uint8Array;
  readonly modRevision: number;
  /** set when the stored value cannot be read (encryption at rest); decoding then fails */
  readonly error?: string;
}

/** A list as the stored texts of its objects, for readers that can write text as it is. */
export interface StoredList {
  readonly items: readonly StoredObjectText[];
  /** the objects the selection decoded to match, by position in `items` (undefined where it
   *  did not need to); each is fresh and may be handed over */
  readonly decoded: ReadonlyArray<KubeObject | undefined>;
  /** the revision the list was read at */
  readonly resourceVersion: string;
  /** '' when there is nothing more */
  readonly continue: string;
  readonly remainingItemCount?: number;
  /** a fresh object of one item, as getList hands it out */
  decode(item: StoredObjectText): KubeObject;
}

/** One object as its stored text, for readers that can write text as it is. */
export interface StoredObject {
  readonly item: StoredObjectText;
  /** a fresh object of the item, as get hands it out */
  decode(item: StoredObjectText): KubeObject;
}

export interface WatchOptions extends Cancellable {
  recursive: boolean;
  /** undefined or '': initial state at a consistent read, then changes. '0': initial state
   *  at any revision. otherwise: changes after that revision, no initial state. */
  resourceVersion?: string;
  /** true: initial ADDED events even for a non-zero resourceVersion (watch-list). */
  sendInitialEvents?: boolean;
  allowWatchBookmarks?: boolean;
  predicate: SelectionPredicate;
  /** the watcher reads only `kind`, `apiVersion` and `metadata` of the objects, and not
   *  `metadata.managedFields` (the informers inside the server): live events may carry
   *  objects with nothing else, which spares decoding the rest of each change. Storage that cannot may send whole objects.
   *  A function answers per change, from the key of the object that changed, when the change
   *  is delivered: true where the metadata is enough. */
  metadataOnly?: MetadataOnly;
}

/** whether a watcher reads nothing but the metadata: of every change, or of a change of `key` */
export type MetadataOnly = boolean | ((key: string) => boolean);

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  /** for DELETED: the last state with resourceVersion set to the deletion revision.
   *  for BOOKMARK: `{metadata: {resourceVersion}}` (annotated
   *  `k8s.io/initial-events-end: "true"` when it closes sendInitialEvents).
   *  for ERROR: a Status object. */
  object: KubeObject;
}

/** A running watch. Iterate for events; `stop()` ends the iteration and frees resources.
 *  Events are delivered in revision order, each exactly once. */
export interface Watch extends AsyncIterable<WatchEvent> {
  stop(): void;
}

/** Called with the current stored object (null when absent and allowed); returns the new
 *  object to store, or throws (a StatusError or StorageError) to abort. May be called
 *  several times when concurrent writers race. */
export type UpdateFunction = (current: KubeObject | null) => KubeObject | Promise<KubeObject>;

/** Objects written with a TTL get an etcd lease: etcd deletes them by itself (a plain
 *  DELETE event for every watcher) once the TTL has passed. Events use it (--event-ttl). A
 *  create is one etcd transaction, never abandoned once sent (it may have been applied whatever
 *  the client learns), so it takes no signal. */
export interface CreateOptions {
  dryRun?: boolean;
  /** keep the object at least this many seconds, then let etcd delete it; 0 or unset: forever */
  ttlSeconds?: number;
  /** reads of this storage's revision space the create relies on (read-fence.ts): it is made
   *  only if they all still hold, else it fails with ReadConditionFailed */
  conditions?: readonly ReadCondition[];
}

/** (a field added here must be passed on by the cacher's CachedUpdateOptions too) */
export interface UpdateOptions extends Cancellable {
  preconditions?: Preconditions;
  /** create the object when the key is absent (PUT to a missing name, apply). The update
   *  function is then called with null. */
  allowCreate?: boolean;
  /** dry run: compute, validate, but do not write */
  dryRun?: boolean;
  /** as CreateOptions.ttlSeconds; a write without it leaves the object without a lease */
  ttlSeconds?: number;
  /** the object as a cache holds it (kube's cachedExistingObject): the update starts from it
   *  instead of reading the store, and reads the store when it may have been stale (a failed
   *  precondition or update function, a write that changes nothing, a lost race) */
  cached?: CachedObject;
}

/** an object as a cache holds it */
export interface CachedObject {
  /** a fresh object with resourceVersion set, the update function's to change */
  readonly object: KubeObject;
  /** the stored JSON it was decoded from (the holder's own bytes: never to be modified) */
  readonly text: Buffer;
  readonly modRevision: number;
}

export interface DeleteOptions extends Cancellable {
  preconditions?: Preconditions;
  /** called with the current object before deletion; may throw to abort */
  validateDeletion?: (current: KubeObject) => void | Promise<void>;
  dryRun?: boolean;
}

export type UnreadableDeletion = 'deleted' | 'readable' | 'absent';

export interface Storage {
  /** fails with KeyExists. Returns the stored object with resourceVersion set, as an object
   *  the caller may change (at most it shares parts of `obj`, which the caller hands over). */
  create(key: string, obj: KubeObject, opts?: CreateOptions): Promise<KubeObject>;
  /** fails with KeyNotFound unless ignoreNotFound (then resolves null). */
  get(key: string, opts?: GetOptions): Promise<KubeObject | null>;
  getList(key: string, opts: ListOptions): Promise<ListResult>;
  /** the list getList would answer, as stored texts; undefined when this storage cannot answer
   *  it from texts it holds (the caller then uses getList). Optional: a storage that changes
   *  objects on the way out (defaulting on read) must not offer it. */
  getStoredList?(key: string, opts: ListOptions): Promise<StoredList | undefined>;
  /** what get would answer, as the stored text (null: not found with ignoreNotFound);
   *  undefined when this storage cannot answer it from a text it holds (the caller then uses
   *  get). Optional, as getStoredList. */
  getStored?(key: string, opts?: GetOptions): Promise<StoredObject | null | undefined>;
  /** read-modify-write with optimistic concurrency; retries on conflict unless the
   *  preconditions pin a resourceVersion (then ResourceVersionConflict). Returns an object
   *  the caller may change (at most it shares parts of what tryUpdate returned). */
  guaranteedUpdate(key: string, tryUpdate: UpdateFunction, opts?: UpdateOptions): Promise<KubeObject>;
  /** removes the key; returns the last state. Fails with KeyNotFound. */
  delete(key: string, opts?: DeleteOptions): Promise<KubeObject>;
  /** removes the key only when its stored value cannot be read (decoded, or decrypted by its
   *  transformer): kube's unsafe deletion of corrupt objects. Read from etcd itself, not a
   *  cache; a value that reads fine, or no value, is left alone and said so. */
  deleteUnreadable(key: string): Promise<UnreadableDeletion>;
  watch(key: string, opts: WatchOptions): Promise<Watch>;
  /** etcd's current revision, read from the cluster (a quorum read). */
  currentResourceVersion(): Promise<number>;
  /** what the revisions of this storage are counted in: the same object for every storage
   *  of one etcd cluster (read fences keep a revision per space) */
  readonly revisionSpace: object;
  /** number of objects under the prefix (for metrics and remainingItemCount estimates) */
  count(key: string): Promise<number>;
  /** true once ready to serve (the cacher: initial list loaded) */
  readonly ready: boolean;
  close(): Promise<void>;
}
