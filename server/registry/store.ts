// GenericStore: RESTResource over Storage for one resource (or its status-like
// subresource), following kube-apiserver's generic registry. The store owns what every kind
// shares (metadata, preconditions, generation, finalizers, graceful deletion, dry run,
// conversion, selectors); the strategy owns what is particular to a kind.

import type {
  Cancellable,
  GetOptions,
  KubeObject,
  ListOptions,
  ListResult,
  MetadataOnly,
  ResourceVersionMatch,
  Storage,
  StoredList,
  StoredObject,
  StoredObjectText,
  UnreadableDeletion,
  UpdateOptions,
  Watch,
  WatchEvent,
} from '../../storage/interface.js';
import { rememberWrittenJson, writtenJsonOf } from '../../storage/interface.js';
import { isStorageError, StorageError } from '../../storage/errors.js';
import { ReadFence } from '../../storage/read-fence.js';
import { fieldManagers } from '../fieldmanager/field-managers.js';
import { keepManagedFieldsTimes } from '../fieldmanager/timestamps.js';
import type { ResourceInfo } from '../apis/types.js';
import { errors, isNotFound, statusFromStorageError, StatusError } from '../machinery/status.js';
import type { FieldSet } from '../selectors/fields.js';
import { objectMetaFieldLabels, type FieldLabelConverter } from '../selectors/field-sets.js';
import {
  convertForReading,
  convertObject,
  readsAsStored,
  requestKindOf,
  storageKindOf,
  type GroupVersionKind,
} from './conversion/index.js';
import { goEscape } from '../machinery/go-json.js';
import { type DecodeStored, ListItemTexts } from './item-text.js';
import { protobufListPieces, protobufObjectBody } from './protobuf-items.js';
import { beforeDelete, gcFinalizers, markAsDeleting } from './deletion.js';
import { KeyScheme, keyPrefixFor } from './keys.js';
import { checkNamespaceAcceptsCreate, type NamespaceLookup } from './namespace-lifecycle.js';
import { clone, newUid, orderObject, rfc3339 } from './object.js';
import { SharedDecodes } from './shared-decodes.js';
import { buildSelection } from './predicate.js';
import type {
  AdmissionOperation,
  DeleteRequestOptions,
  GetRequestOptions,
  ListObject,
  ListRequestOptions,
  PreparedList,
  PreparedObject,
  ObjectTransform,
  RequestContext,
  RESTResource,
  WatchRequestOptions,
} from './rest.js';
import type { FinishFunc, ResourceStrategy, StrategyContext } from './strategy.js';
import { fieldErrors, invalidError, type FieldError } from '../machinery/validation/field-error.js';
import { nameIsPathSegment, isDNS1123Label } from '../machinery/validation/names.js';
import { validateObjectMeta } from './validation/object-meta.js';
import { addWarnings } from '../machinery/warnings.js';

export interface GenericStoreConfig {
  info: ResourceInfo;
  /** set for a subresource store (`status`, `finalize`, ...) */
  subresource?: string;
  /** a status store whose writes keep the stored labels (the resource's descriptor says) */
  statusKeepsLabels?: boolean;
  strategy: ResourceStrategy;
  storage: Storage;
  /** namespaced stores check that the namespace exists and is not terminating on create */
  namespaces?: NamespaceLookup;
  /** the selectable fields of a stored object */
  fieldsOf: (obj: KubeObject) => FieldSet;
  /** checks (and renames) a request's field labels; default metadata.name and metadata.namespace */
  fieldLabels?: FieldLabelConverter;
  now?: () => Date;
  /** which verbs this store answers; others are 405 (e.g. `/status` has no create) */
  verbs?: ReadonlySet<StoreVerb>;
  /** false (--enable-garbage-collector=false): deletes add no `orphan` or
   *  `foregroundDeletion` finalizer, since no garbage collector would remove them */
  garbageCollection?: boolean;
  /** --delete-collection-workers: deletes a deletecollection runs at once (default 1) */
  deleteCollectionWorkers?: number;
}

export type StoreVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'delete' | 'deletecollection';

/** kube-apiserver's alphabet for generated name suffixes (no vowels, no look-alikes) */
const nameSuffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
const nameSuffixLength = 5;
const maxGeneratedNameLength = 63 - nameSuffixLength;
const maxNameGenerationAttempts = 8;
/** page size when deleteCollection lists without a limit */
const deleteCollectionPageSize = 10000;

/** a list's JSON in pieces: the envelope opened for its items, the items, the close. An item
 *  whose stored bytes give its text is those bytes around its edits (views, not copies). */
function* listTextPieces(
  envelopeJson: string,
  items: PreparedListItems,
  texts: ListItemTexts,
  decode: DecodeStored,
): Generator<string | Uint8Array> {
  // the envelope's last member is `metadata`, an object: its text ends with two braces
  yield envelopeJson.slice(0, -1) + ',"items":[';
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const bytes = texts.bytes(item, decode);
    if (bytes) {
      yield i === 0 ? '{' : ',{';
      yield bytes.bytes.subarray(bytes.bodyStart, bytes.rvAt);
      yield bytes.rvText;
      yield bytes.bytes.subarray(bytes.rvAt);
    } else {
      const text = texts.text(item, decode);
      yield i === 0 ? text : ',' + text;
    }
  }
  yield ']}';
}

type PreparedListItems = StoredList['items'];

/**
 * Storage options that hand the request's signal on unread (getters on the prototype): a read
 * the cache answers at once, or a write that needs no wait, never makes it
 * (request/cancellation.ts).
 */
class RequestCancellable implements Cancellable {
  constructor(private readonly ctx: RequestContext) {}

  get signal(): AbortSignal | undefined {
    return this.ctx.cancellation?.signal;
  }

  get cancelled(): boolean | undefined {
    return this.ctx.cancellation?.cancelled;
  }
}

/** a single object read's storage options */
class ObjectReadOptions extends RequestCancellable implements GetOptions {
  readonly resourceVersion: string | undefined;
  readonly fence: ReadFence | undefined;

  constructor(
    ctx: RequestContext,
    opts: GetRequestOptions,
    readonly ignoreNotFound: boolean,
  ) {
    super(ctx);
    this.resourceVersion = opts.resourceVersion;
    this.fence = ctx.readFence;
  }
}

/** an update's storage options */
class ObjectUpdateOptions extends RequestCancellable implements UpdateOptions {
  readonly dryRun: boolean | undefined;

  constructor(
    ctx: RequestContext,
    readonly allowCreate: boolean,
    readonly ttlSeconds: number | undefined,
  ) {
    super(ctx);
    this.dryRun = ctx.dryRun;
  }
}

export function generateName(base: string): string {
  const prefix = base.length > maxGeneratedNameLength ? base.slice(0, maxGeneratedNameLength) : base;
  let suffix = '';
  for (let i = 0; i < nameSuffixLength; i++) suffix += nameSuffixAlphabet[Math.floor(Math.random() * nameSuffixAlphabet.length)];
  return prefix + suffix;
}

/** an update emptied the finalizers of an object being deleted: remove it instead */
class EmptiedFinalizers extends Error {
  constructor(
    readonly object: KubeObject,
    readonly resourceVersion: string,
  ) {
    super('emptied finalizers');
  }
}

/** the graceful deletion path found nothing left to wait for: delete now */
class DeleteNow extends Error {}
/** a graceful deletion is already pending and this request does not change it */
class AlreadyDeleting extends Error {}

export class GenericStore implements RESTResource {
  readonly info: ResourceInfo;
  readonly subresource?: string;
  readonly statusKeepsLabels?: boolean;
  readonly strategy: ResourceStrategy;
  readonly storage: Storage;
  readonly keys: KeyScheme;
  protected readonly namespaces?: NamespaceLookup;
  protected readonly fieldsOf: (obj: KubeObject) => FieldSet;
  protected readonly fieldLabels: FieldLabelConverter;
  protected readonly now: () => Date;
  protected readonly requestKind: GroupVersionKind;
  protected readonly storageKind: GroupVersionKind;
  private readonly verbs?: GenericStoreConfig['verbs'];
  private readonly garbageCollection: boolean;
  private readonly deleteCollectionWorkers: number;

  constructor(cfg: GenericStoreConfig) {
    this.info = cfg.info;
    this.subresource = cfg.subresource;
    this.statusKeepsLabels = cfg.statusKeepsLabels;
    this.strategy = cfg.strategy;
    this.storage = cfg.storage;
    this.namespaces = cfg.namespaces;
    this.fieldsOf = cfg.fieldsOf;
    this.fieldLabels = cfg.fieldLabels ?? objectMetaFieldLabels;
    this.now = cfg.now ?? (() => new Date());
    this.requestKind = requestKindOf(cfg.info);
    this.storageKind = storageKindOf(cfg.info);
    this.verbs = cfg.verbs;
    this.garbageCollection = cfg.garbageCollection ?? true;
    this.deleteCollectionWorkers = cfg.deleteCollectionWorkers ?? 1;
    this.keys = new KeyScheme(keyPrefixFor(cfg.info), cfg.strategy.namespaced);
    const asStored = readsAsStored(this.storageKind, this.requestKind);
    this.itemTexts = asStored ? new ListItemTexts((obj) => this.listItem(obj)) : undefined;
    this.objectTexts = asStored ? new ListItemTexts((obj) => this.fromStorageRead(obj), true) : undefined;
  }

  /** the finalizers a delete leaves for the garbage collector (none when it is disabled) */
  private deletionFinalizers(...args: Parameters<typeof gcFinalizers>): ReturnType<typeof gcFinalizers> {
    if (!this.garbageCollection) return { changed: false, finalizers: args[1].metadata.finalizers ?? [] };
    return gcFinalizers(...args);
  }

  // ---- conversion and errors ----

  /** a stored object as this endpoint's version speaks it */
  fromStorage(obj: KubeObject): KubeObject {
    return convertObject(obj, this.storageKind, this.requestKind);
  }

  /** fromStorage for an object read from storage just now and used for nothing else (the
   *  etcd3 store and the cacher decode a fresh object per read): no deep copy */
  private fromStorageRead(obj: KubeObject): KubeObject {
    return convertObject(obj, this.storageKind, this.requestKind, true);
  }

  /** fromStorageRead of what a write handed back, with the JSON text the store encoded it to
   *  when this endpoint speaks objects as stored and the conversion kept every member where it
   *  was (the answer is then written without encoding it again) */
  private fromStorageWritten(obj: KubeObject): KubeObject {
    const out = this.fromStorageRead(obj);
    const json = this.itemTexts ? writtenJsonOf(obj) : undefined;
    if (json !== undefined && out.metadata === obj.metadata && sameMemberOrder(out, obj)) rememberWrittenJson(out, json);
    return out;
  }

  /** fromStorage for a reader that changes nothing in the object it gets (nor in `obj`) */
  private fromStorageForReading(obj: KubeObject): KubeObject {
    return convertForReading(obj, this.storageKind, this.requestKind);
  }

  /** a request object in the storage version */
  toStorage(obj: KubeObject): KubeObject {
    return convertObject(obj, this.requestKind, this.storageKind);
  }

  /** toStorage of an object the caller hands over and uses no more: no deep copy */
  private toStorageOwned(obj: KubeObject): KubeObject {
    return convertObject(obj, this.requestKind, this.storageKind, true);
  }

  protected ref(name?: string) {
    return { group: this.info.group, resource: this.info.resource, name };
  }

  protected mapError(e: unknown, name?: string): unknown {
    if (e instanceof StorageError) return statusFromStorageError(e, this.ref(name));
    return e;
  }

  /** the Status a storage error means for this resource */
  fromStorageError(e: StorageError, name?: string): StatusError {
    return statusFromStorageError(e, this.ref(name));
  }

  protected strategyContext(ctx: RequestContext): StrategyContext {
    return { request: ctx, now: this.now(), info: this.info };
  }

  /** metadata.managedFields after this write: the writer's Update entry gains what it
   *  changed (kube-apiserver's field manager, run on the defaulted object before admission) */
  protected recordManagedFields(ctx: RequestContext, current: KubeObject | null, obj: KubeObject): void {
    if (ctx.managedFieldsRecorded) return;
    const fm = fieldManagers().for(this.info, this.subresource ?? '', this.statusKeepsLabels);
    // the field manager only reads both objects
    const entries = fm.update(
      current ? this.fromStorageForReading(current) : null,
      this.fromStorageForReading(obj),
      ctx.fieldManager ?? '',
    );
    if (entries) obj.metadata.managedFields = entries as unknown as NonNullable<KubeObject['metadata']['managedFields']>;
    else delete obj.metadata.managedFields;
  }

  protected requireVerb(verb: StoreVerb): void {
    if (this.verbs && !this.verbs.has(verb)) {
      const what = this.subresource ? `${this.info.resource}/${this.subresource}` : this.info.resource;
      throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${what})`);
    }
  }

  protected invalid(name: string, errs: FieldError[]): StatusError {
    return invalidError(this.info.group, this.info.kind, name, errs);
  }

  /** the request namespace wins; a different one in the body is a 400 (cluster scope: none) */
  protected ensureNamespace(obj: KubeObject, requestNamespace: string): void {
    const expected = this.strategy.namespaced ? requestNamespace : '';
    const actual = obj.metadata.namespace ?? '';
    if (actual === expected) {
      if (!expected) delete obj.metadata.namespace;
      return;
    }
    if (!actual) {
      obj.metadata.namespace = expected;
      return;
    }
    if (!expected) {
      delete obj.metadata.namespace;
      return;
    }
    throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }

  /** mutating admission of `obj`, which the caller hands over (it uses the result instead).
   *  The old object is the stored one as admission reads it: plugins never change an
   *  oldObject (kube hands them the live object itself), so it is not copied. */
  protected async admit(
    ctx: RequestContext,
    operation: AdmissionOperation,
    obj: KubeObject,
    old: KubeObject | null,
    readFence?: ReadFence,
  ): Promise<KubeObject> {
    const mutate = ctx.admission?.mutate;
    if (!mutate) return obj;
    const out = await mutate({
      operation,
      resource: this.info,
      subresource: this.subresource,
      namespace: ctx.namespace,
      name: obj.metadata.name ?? '',
      object: this.fromStorageRead(obj),
      oldObject: old ? this.fromStorageForReading(old) : null,
      dryRun: ctx.dryRun,
      user: ctx.user,
      readFence,
    });
    // the chain's result is this write's alone
    return this.toStorageOwned(out);
  }

  protected async validateAdmission(
    ctx: RequestContext,
    operation: AdmissionOperation,
    obj: KubeObject | null,
    old: KubeObject | null,
    name: string,
    readFence?: ReadFence,
  ): Promise<void> {
    const validate = ctx.admission?.validate;
    if (!validate) return;
    await validate({
      operation,
      resource: this.info,
      subresource: this.subresource,
      namespace: ctx.namespace,
      name,
      // validating plugins and webhooks only read it: no deep copy of what is about to be stored
      object: obj ? this.fromStorageForReading(obj) : null,
      oldObject: old ? this.fromStorageForReading(old) : null,
      dryRun: ctx.dryRun,
      user: ctx.user,
      readFence,
    });
  }

  // ---- reads ----

  async get(ctx: RequestContext, name: string, opts: GetRequestOptions): Promise<KubeObject> {
    this.requireVerb('get');
    const key = this.keys.objectKey(ctx.namespace, name);
    let obj: KubeObject | null;
    try {
      obj = await this.storage.get(key, new ObjectReadOptions(ctx, opts, false));
    } catch (e) {
      throw this.mapError(e, name);
    }
    if (!obj) throw errors.notFound(this.ref(name));
    return this.fromStorageRead(obj);
  }

  /** the object texts edited from the stored ones, as itemTexts */
  private readonly objectTexts: ListItemTexts | undefined;

  async openGet(ctx: RequestContext, name: string, opts: GetRequestOptions): Promise<PreparedObject> {
    const texts = this.objectTexts;
    if (!texts || !this.storage.getStored) {
      const obj = await this.get(ctx, name, opts);
      return { toObject: () => obj, jsonBody: () => undefined, protobufBody: () => undefined };
    }
    this.requireVerb('get');
    const key = this.keys.objectKey(ctx.namespace, name);
    let stored: StoredObject | null | undefined;
    try {
      stored = await this.storage.getStored(key, new ObjectReadOptions(ctx, opts, false));
    } catch (e) {
      throw this.mapError(e, name);
    }
    if (stored === undefined) {
      // the storage cannot answer from its texts (e.g. not synced yet): the decoded path
      const obj = await this.get(ctx, name, opts);
      return { toObject: () => obj, jsonBody: () => undefined, protobufBody: () => undefined };
    }
    if (!stored) throw errors.notFound(this.ref(name));
    const { item, decode } = stored;
    const toObject = () => this.fromStorageRead(decode(item));
    return {
      toObject,
      protobufBody: () => protobufObjectBody(this.typeMeta(this.requestKind.kind), this.typeMeta(this.info.listKind), item, toObject),
      jsonBody: () => {
        if (item.error !== undefined) return undefined;
        try {
          return texts.body(item, decode);
        } catch {
          // a text that does not decode: the decoded path reports it as it always has
          return undefined;
        }
      },
    };
  }

  /** the storage key and options a list or watch reads, after selector narrowing */
  protected selection(ctx: RequestContext, opts: ListRequestOptions) {
    const sel = buildSelection(opts.labelSelector, opts.fieldSelector, this.fieldLabels, this.fieldsOf);
    let namespace = ctx.namespace;
    if (this.strategy.namespaced && !namespace) {
      // a metadata.namespace selector narrows an all-namespaces request to one namespace
      const ns = sel.fields.requiresExactMatch('metadata.namespace');
      if (ns && isDNS1123Label(ns).length === 0) namespace = ns;
    }
    const name = opts.name ?? sel.fields.requiresExactMatch('metadata.name');
    if (name !== undefined && (!this.strategy.namespaced || namespace)) {
      try {
        return { key: this.keys.objectKey(namespace, name), recursive: false, predicate: sel.predicate };
      } catch {
        // a name that cannot be a key cannot match anything stored; read the collection
      }
    }
    let predicate = sel.predicate;
    if (opts.name !== undefined) {
      // the single-object form read through the collection still selects that one name
      const only = opts.name;
      const inner = sel.predicate;
      predicate = { isEverything: false, matches: (obj) => obj.metadata?.name === only && inner.matches(obj) };
    }
    if (name !== undefined) {
      // an object's key ends with its name (see KeyScheme): the cache need not decode the rest
      const suffix = `/${name}`;
      predicate = { ...predicate, keyMayMatch: (key) => key.endsWith(suffix) };
    }
    return { key: this.keys.collectionKey(namespace), recursive: true, predicate };
  }

  protected toListObject(res: ListResult): ListObject {
    return { ...this.listEnvelope(res), items: res.items.map((o) => this.listItem(o)) };
  }

  /** the list without its items, members in the order kube writes them */
  private listEnvelope(res: Omit<ListResult, 'items'>): Omit<ListObject, 'items'> {
    const metadata: ListObject['metadata'] = { resourceVersion: res.resourceVersion };
    if (res.continue) metadata.continue = res.continue;
    if (res.remainingItemCount !== undefined && res.remainingItemCount !== null) metadata.remainingItemCount = res.remainingItemCount;
    return { ...this.typeMeta(this.info.listKind), metadata };
  }

  /** `kind` in the request's group version */
  private typeMeta(kind: string): { kind: string; apiVersion: string } {
    return { kind, apiVersion: this.info.group ? `${this.info.group}/${this.info.version}` : this.info.version };
  }

  /** an item of a list, from an object read just now: kube-apiserver's typed lists carry no
   *  kind/apiVersion on their items */
  private listItem(obj: KubeObject): KubeObject {
    const item = this.fromStorageRead(obj);
    delete item.kind;
    delete item.apiVersion;
    return item;
  }

  /** the list items' texts edited from the stored ones; undefined when the request's
   *  version is not the storage version (items are converted, not edited) */
  private readonly itemTexts: ListItemTexts | undefined;

  private listOptions(ctx: RequestContext, opts: ListRequestOptions, s: ReturnType<GenericStore['selection']>): ListOptions {
    return {
      signal: ctx.cancellation?.signal,
      fence: ctx.readFence,
      recursive: s.recursive,
      resourceVersion: opts.resourceVersion,
      resourceVersionMatch: rvMatch(opts.resourceVersionMatch),
      limit: opts.limit,
      continue: opts.continue,
      predicate: s.predicate,
    };
  }

  async list(ctx: RequestContext, opts: ListRequestOptions): Promise<ListObject> {
    this.requireVerb('list');
    const s = this.selection(ctx, opts);
    try {
      return this.toListObject(await this.storage.getList(s.key, this.listOptions(ctx, opts, s)));
    } catch (e) {
      throw this.mapError(e);
    }
  }

  async getShared(ctx: RequestContext, name: string, opts: GetRequestOptions): Promise<KubeObject | null> {
    this.requireVerb('get');
    let stored: StoredObject | null | undefined;
    try {
      stored = await this.storage.getStored?.(this.keys.objectKey(ctx.namespace, name), new ObjectReadOptions(ctx, opts, true));
    } catch (e) {
      throw this.mapError(e, name);
    }
    if (stored === undefined) {
      try {
        return await this.get(ctx, name, opts);
      } catch (e) {
        if (isNotFound(e)) return null;
        throw e;
      }
    }
    return stored && this.shared(stored.item, stored.decode);
  }

  async listShared(ctx: RequestContext, opts: ListRequestOptions): Promise<readonly KubeObject[]> {
    this.requireVerb('list');
    const s = this.selection(ctx, opts);
    let stored: StoredList | undefined;
    try {
      stored = await this.storage.getStoredList?.(s.key, this.listOptions(ctx, opts, s));
    } catch (e) {
      throw this.mapError(e);
    }
    if (!stored) return (await this.list(ctx, opts)).items;
    const { items, decoded, decode } = stored;
    return items.map((item, i) => this.shared(item, (text) => decoded[i] ?? decode(text)));
  }

  private readonly sharedDecodes = new SharedDecodes();

  private shared(item: StoredObjectText, decode: DecodeStored): KubeObject {
    return this.sharedDecodes.get(item, (text) => this.fromStorageRead(decode(text)));
  }

  async openList(ctx: RequestContext, opts: ListRequestOptions): Promise<PreparedList> {
    this.requireVerb('list');
    const s = this.selection(ctx, opts);
    const listOpts = this.listOptions(ctx, opts, s);
    let stored: StoredList | undefined;
    try {
      stored = await this.storage.getStoredList?.(s.key, listOpts);
      if (!stored) {
        const list = this.toListObject(await this.storage.getList(s.key, listOpts));
        return { storedBytes: 0, toObject: () => list, jsonText: () => undefined, protobufPieces: () => undefined };
      }
    } catch (e) {
      throw this.mapError(e);
    }
    return this.preparedList(stored);
  }

  private preparedList(stored: StoredList): PreparedList {
    let storedBytes = 0;
    for (const item of stored.items) storedBytes += item.size;
    const envelope = this.listEnvelope(stored);
    const texts = this.itemTexts;
    return {
      storedBytes,
      toObject: () => ({
        ...envelope,
        items: stored.items.map((item, i) => this.listItem(stored.decoded[i] ?? stored.decode(item))),
      }),
      jsonText: () => {
        if (!texts) return undefined;
        try {
          if (!texts.prepare(stored.items, stored.decode)) return undefined;
        } catch {
          // an item that does not decode: the decoded path reports it as it always has
          return undefined;
        }
        return listTextPieces(goEscape(JSON.stringify(envelope)), stored.items, texts, stored.decode);
      },
      protobufPieces: () => protobufListPieces(envelope, stored, (i) => this.listItem(stored.decoded[i] ?? stored.decode(stored.items[i]))),
    };
  }

  async watch(ctx: RequestContext, opts: WatchRequestOptions): Promise<Watch> {
    this.requireVerb('watch');
    const s = this.selection(ctx, opts);
    let w: Watch;
    try {
      w = await this.storage.watch(s.key, {
        signal: ctx.cancellation?.signal,
        recursive: s.recursive,
        resourceVersion: opts.resourceVersion,
        sendInitialEvents: opts.sendInitialEvents,
        allowWatchBookmarks: opts.allowWatchBookmarks,
        predicate: s.predicate,
        metadataOnly: this.watchMetadataOnly(opts.metadataOnly),
      });
    } catch (e) {
      throw this.mapError(e);
    }
    return mapWatch(w, (ev) => this.watchEvent(ev));
  }

  /** what storage may send as metadata alone: only where no conversion reads the rest of the
   *  object on its way out; a question about an object is asked of the key that changed */
  private watchMetadataOnly(asked: WatchRequestOptions['metadataOnly']): MetadataOnly {
    if (!asked || this.itemTexts === undefined) return false;
    if (asked === true) return true;
    const keys = this.keys;
    return (key) => {
      const at = keys.objectAt(key);
      return at !== undefined && asked(at.namespace, at.name);
    };
  }

  protected watchEvent(ev: WatchEvent): WatchEvent {
    if (ev.type === 'ERROR') return ev;
    if (ev.type === 'BOOKMARK') {
      const metadata: KubeObject['metadata'] = { resourceVersion: ev.object.metadata?.resourceVersion, creationTimestamp: null };
      if (ev.object.metadata?.annotations) metadata.annotations = ev.object.metadata.annotations;
      return {
        type: 'BOOKMARK',
        object: {
          kind: this.requestKind.kind,
          apiVersion: this.info.group ? `${this.info.group}/${this.info.version}` : this.info.version,
          metadata,
        },
      };
    }
    // the watch cache hands one event object to every watcher it concerns: convert it once,
    // so they all share the converted event (and the HTTP layer its encoded bytes). Every
    // watcher only reads it (informers copy what they change), so the frozen object the
    // cache decoded is not copied but for its top level
    let out = this.convertedEvents.get(ev);
    if (!out) {
      out = { type: ev.type, object: this.fromStorageForReading(ev.object) };
      this.convertedEvents.set(ev, out);
    }
    return out;
  }

  private readonly convertedEvents = new WeakMap<WatchEvent, WatchEvent>();

  // ---- create ----

  async create(ctx: RequestContext, body: KubeObject): Promise<KubeObject> {
    this.requireVerb('create');
    const c = this.strategyContext(ctx);
    let obj = ctx.bodyHandedOver ? this.toStorageOwned(body) : this.toStorage(body);
    if (!obj.metadata || typeof obj.metadata !== 'object') obj.metadata = {};
    this.ensureNamespace(obj, ctx.namespace);
    this.strategy.applyDefaults(obj, c);
    this.recordManagedFields(ctx, null, obj);
    if (this.strategy.namespaced && this.namespaces) {
      await checkNamespaceAcceptsCreate(
        this.namespaces,
        obj.metadata.namespace ?? '',
        this.info.group,
        this.info.resource,
        obj.metadata.name ?? '',
      );
    }
    // one fence for the lookups of both admission phases (see createOnce)
    const fence = new ReadFence();
    obj = await this.admit(ctx, 'CREATE', obj, null, fence);
    this.ensureNamespace(obj, ctx.namespace);
    const generate = !obj.metadata.name && !!obj.metadata.generateName;
    const attempts = generate ? maxNameGenerationAttempts : 1;
    let last: unknown;
    for (let i = 0; i < attempts; i++) {
      try {
        // each attempt at a generated name starts from the same object
        return await this.createOnce(ctx, generate ? clone(obj) : obj, generate, fence);
      } catch (e) {
        last = e;
        if (!(generate && e instanceof StatusError && e.reason === 'AlreadyExists')) throw e;
      }
    }
    throw last;
  }

  /** An object etcd refused as too large may be written without its managedFields (often
   *  the larger part), as kube-apiserver does for creates, updates and patches but not for
   *  server-side apply, whose field ownership is the point of the write. */
  private mayDropManagedFields(ctx: RequestContext, e: unknown): boolean {
    return isStorageError(e, 'RequestTooLarge') && !ctx.managedFieldsRecorded;
  }

  /** system metadata of a new object: uid, creation time, nothing of a past life */
  protected fillNewObjectMeta(obj: KubeObject, now: Date): void {
    const meta = obj.metadata;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    meta.creationTimestamp = rfc3339(now);
    meta.uid = newUid();
    if (this.strategy.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
  }

  /** prepare and validate a new object (kube's BeforeCreate); throws 422 */
  protected beforeCreate(ctx: RequestContext, c: StrategyContext, obj: KubeObject): void {
    this.ensureNamespace(obj, ctx.namespace);
    this.strategy.prepareForCreate(obj, c);
    const name = obj.metadata.name ?? '';
    let errs = this.strategy.validate(obj, c);
    if (errs.length) throw this.invalid(name, errs);
    // the generic rule every name must also pass (a path segment)
    errs = validateObjectMeta(obj.metadata, this.strategy.namespaced, nameIsPathSegment);
    if (errs.length) throw this.invalid(name, errs);
    addWarnings(ctx.warnings, this.strategy.warningsOnCreate(obj, c));
    this.strategy.canonicalize(obj);
  }

  private async createOnce(ctx: RequestContext, obj: KubeObject, generate: boolean, fence: ReadFence): Promise<KubeObject> {
    const c = this.strategyContext(ctx);
    const rvSet = nonZeroResourceVersion(obj.metadata.resourceVersion);
    this.fillNewObjectMeta(obj, c.now);
    if (generate) obj.metadata.name = generateName(obj.metadata.generateName ?? '');
    delete obj.metadata.resourceVersion;
    // side effects (e.g. IP allocation) come first so validation and admission see them
    const finish: FinishFunc | undefined = await this.strategy.beginCreate?.(obj, c);
    const name = obj.metadata.name ?? '';
    let key = '';
    let stored: KubeObject;
    try {
      this.beforeCreate(ctx, c, obj);
      // Validating admission reads optimistically: its lookups wait for no revision probe and
      // become conditions of the create's transaction. If one no longer holds, nothing is
      // written and admission runs once more, reading strictly (mutating admission has read
      // strictly already: what it decided is in the object).
      const warningsBefore = ctx.warnings.length;
      for (let attempt = 0; ; attempt++) {
        const optimistic = attempt === 0 && !ctx.dryRun;
        // the second round's warnings replace the first's (the client sees each once)
        ctx.warnings.length = warningsBefore;
        fence.readOptimisticallyIn(optimistic ? this.storage.revisionSpace : undefined);
        await this.validateAdmission(ctx, 'CREATE', obj, null, name, fence);
        // kube's storage answers with a plain error, which its handlers send as a 500 without a reason
        if (rvSet) throw new StatusError(500, '', 'resourceVersion should not be set on objects to be created');
        key = this.keys.objectKey(obj.metadata.namespace ?? '', name);
        try {
          stored = await this.storage.create(key, orderObject(obj), {
            dryRun: ctx.dryRun,
            ttlSeconds: this.strategy.ttlSeconds,
            conditions: fence.conditions,
          });
          break;
        } catch (e) {
          if (obj.metadata.managedFields && this.mayDropManagedFields(ctx, e)) {
            // once more without them (admission reads again, strictly)
            delete obj.metadata.managedFields;
            continue;
          }
          if (!(optimistic && isStorageError(e, 'ReadConditionFailed'))) throw e;
        }
      }
    } catch (e) {
      await finish?.(false);
      if (key && isStorageError(e, 'KeyExists')) throw await this.createError(e, key, name, generate);
      throw this.mapError(e, name);
    }
    await finish?.(true);
    // storage hands back a fresh object
    return this.fromStorageWritten(stored);
  }

  private async createError(_e: unknown, key: string, name: string, generated: boolean): Promise<StatusError> {
    let err: StatusError = errors.alreadyExists(this.ref(name));
    if (generated) {
      const q = this.info.group ? `${this.info.resource}.${this.info.group}` : this.info.resource;
      err = new StatusError(409, 'AlreadyExists', `${q} "${name}" already exists, the server was not allowed to generate a unique name`, {
        name,
        group: this.info.group,
        kind: this.info.resource,
        retryAfterSeconds: 1,
      });
    }
    try {
      const existing = await this.storage.get(key, { ignoreNotFound: true });
      if (existing?.metadata.deletionTimestamp) {
        err = new StatusError(err.code, err.reason, `object is being deleted: ${err.message}`, err.details);
      }
    } catch {
      // the AlreadyExists answer stands without the hint
    }
    return err;
  }

  // ---- update ----

  async update(
    ctx: RequestContext,
    name: string,
    transform: ObjectTransform,
    opts: { allowCreate: boolean },
  ): Promise<{ object: KubeObject; created: boolean }> {
    this.requireVerb('update');
    const key = this.keys.objectKey(ctx.namespace, name);
    // subresources never create
    const allowCreate = !this.subresource && (this.strategy.allowCreateOnUpdate || opts.allowCreate);
    let withoutManagedFields = false;
    for (;;) {
      let created = false;
      let finish: FinishFunc | undefined;
      try {
        const stored = await this.storage.guaranteedUpdate(
          key,
          async (current) => {
            if (finish) {
              // an earlier attempt lost a race: undo its side effects before retrying
              await finish(false);
              finish = undefined;
            }
            if (!current) {
              if (!allowCreate) throw errors.notFound(this.ref(name));
              created = true;
              const r = await this.prepareCreateOnUpdate(ctx, name, transform);
              finish = r.finish;
              if (withoutManagedFields) delete r.object.metadata.managedFields;
              return r.object;
            }
            created = false;
            const r = await this.prepareUpdate(ctx, name, current, transform);
            finish = r.finish;
            if (withoutManagedFields) delete r.object.metadata.managedFields;
            return r.object;
          },
          new ObjectUpdateOptions(ctx, allowCreate, this.strategy.ttlSeconds),
        );
        await finish?.(true);
        // storage hands back a fresh object
        return { object: this.fromStorageWritten(stored), created };
      } catch (e) {
        await finish?.(false);
        if (e instanceof EmptiedFinalizers) {
          const done = await this.deleteEmptied(ctx, key, name, e);
          if (done) return { object: done, created: false };
          continue;
        }
        if (!withoutManagedFields && this.mayDropManagedFields(ctx, e)) {
          withoutManagedFields = true;
          continue;
        }
        throw this.mapError(e, name);
      }
    }
  }

  /** removes an object whose last finalizer an update removed; undefined when it changed in
   *  between (the caller retries the whole update) */
  private async deleteEmptied(ctx: RequestContext, key: string, name: string, e: EmptiedFinalizers): Promise<KubeObject | undefined> {
    try {
      const deleted = await this.storage.delete(key, {
        preconditions: { resourceVersion: e.resourceVersion },
        dryRun: ctx.dryRun,
        signal: ctx.cancellation?.signal,
      });
      await this.strategy.afterDelete?.(deleted, this.strategyContext(ctx));
    } catch (err) {
      if (isStorageError(err, 'ResourceVersionConflict')) return undefined;
      // someone else removed it first: the update still answers with the object
      if (!isStorageError(err, 'KeyNotFound')) throw this.mapError(err, name);
    }
    return this.fromStorage(e.object);
  }

  private async prepareCreateOnUpdate(
    ctx: RequestContext,
    name: string,
    transform: ObjectTransform,
  ): Promise<{ object: KubeObject; finish?: FinishFunc }> {
    const c = this.strategyContext(ctx);
    const body = await transform(null);
    let obj = ctx.transformReplaces ? this.toStorageOwned(body) : this.toStorage(body);
    if (!obj.metadata) obj.metadata = {};
    if (!obj.metadata.name) obj.metadata.name = name;
    if (obj.metadata.name !== name) {
      throw errors.badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    }
    this.ensureNamespace(obj, ctx.namespace);
    this.strategy.applyDefaults(obj, c);
    this.recordManagedFields(ctx, null, obj);
    if (this.strategy.namespaced && this.namespaces) {
      await checkNamespaceAcceptsCreate(this.namespaces, obj.metadata.namespace ?? '', this.info.group, this.info.resource, name);
    }
    obj = await this.admit(ctx, 'CREATE', obj, null);
    this.fillNewObjectMeta(obj, c.now);
    delete obj.metadata.resourceVersion;
    const finish = await this.strategy.beginCreate?.(obj, c);
    try {
      this.beforeCreate(ctx, c, obj);
      await this.validateAdmission(ctx, 'CREATE', obj, null, name);
    } catch (e) {
      await finish?.(false);
      throw e;
    }
    return { object: orderObject(obj), finish };
  }

  private async prepareUpdate(
    ctx: RequestContext,
    name: string,
    current: KubeObject,
    transform: ObjectTransform,
  ): Promise<{ object: KubeObject; finish?: FinishFunc }> {
    const c = this.strategyContext(ctx);
    let obj = ctx.transformReplaces
      ? this.toStorageOwned(await transform(this.fromStorageForReading(current)))
      : this.toStorage(await transform(this.fromStorage(current)));
    if (!obj.metadata) obj.metadata = {};
    this.strategy.applyDefaults(obj, c);
    this.recordManagedFields(ctx, current, obj);
    obj = await this.admit(ctx, 'UPDATE', obj, current);
    const meta = obj.metadata;
    const old = current.metadata;

    // a uid in the body is a precondition
    if (meta.uid && meta.uid !== old.uid) {
      throw errors.conflict(this.ref(name), `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${old.uid ?? ''}`);
    }
    if (!meta.resourceVersion) {
      if (!this.strategy.allowUnconditionalUpdate) {
        throw invalidError(this.info.group, this.info.resource, name, [
          fieldErrors.invalid('metadata.resourceVersion', { rendered: '0x0' }, 'must be specified for an update'),
        ]);
      }
      meta.resourceVersion = old.resourceVersion;
    } else if (meta.resourceVersion !== old.resourceVersion) {
      throw errors.conflict(this.ref(name), 'the object has been modified; please apply your changes to the latest version and try again');
    }

    const finish = await this.strategy.beginUpdate?.(obj, current, c);
    try {
      this.beforeUpdate(ctx, c, obj, current, name);
      // a write that changes nothing but managedFields times stays a no-op
      keepManagedFieldsTimes(obj, current);
      await this.validateAdmission(ctx, 'UPDATE', obj, current, name);
    } catch (e) {
      await finish?.(false);
      throw e;
    }
    if (this.strategy.shouldDeleteDuringUpdate(obj, current)) {
      await finish?.(false);
      throw new EmptiedFinalizers(orderObject(obj), old.resourceVersion ?? '');
    }
    return { object: orderObject(obj), finish };
  }

  /** kube's BeforeUpdate: restore what may not change, bump generation, validate (422) */
  protected beforeUpdate(ctx: RequestContext, c: StrategyContext, obj: KubeObject, current: KubeObject, name: string): void {
    const old = current.metadata;
    this.ensureNamespace(obj, ctx.namespace);
    if (old.generation === undefined) delete obj.metadata.generation;
    else obj.metadata.generation = old.generation;
    this.strategy.prepareForUpdate(obj, current, c);
    const m = obj.metadata;
    if (!m.uid) m.uid = old.uid;
    if (old.creationTimestamp) m.creationTimestamp = old.creationTimestamp;
    if (old.deletionTimestamp) m.deletionTimestamp = old.deletionTimestamp;
    if (old.deletionGracePeriodSeconds !== undefined && m.deletionGracePeriodSeconds === undefined) {
      m.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
    }
    if (this.strategy.tracksGeneration && this.strategy.generationChanged(obj, current)) {
      m.generation = (old.generation ?? 0) + 1;
    }
    const errs = [...validateObjectMeta(m, this.strategy.namespaced, nameIsPathSegment), ...this.strategy.validateUpdate(obj, current, c)];
    if (errs.length) throw this.invalid(m.name ?? name, errs);
    addWarnings(ctx.warnings, this.strategy.warningsOnUpdate(obj, current, c));
    this.strategy.canonicalize(obj);
  }

  // ---- delete ----

  /** what a delete that removed (or will not keep) the object answers */
  protected deletedResponse(obj: KubeObject): KubeObject {
    if (this.strategy.returnDeletedObject) return this.fromStorage(obj);
    const details: Record<string, string> = { name: obj.metadata.name ?? '' };
    if (this.info.group) details.group = this.info.group;
    details.kind = this.info.resource;
    if (obj.metadata.uid) details.uid = obj.metadata.uid;
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details } as KubeObject;
  }

  async deleteUnreadable(ctx: RequestContext, name: string): Promise<UnreadableDeletion> {
    this.requireVerb('delete');
    try {
      return await this.storage.deleteUnreadable(this.keys.objectKey(ctx.namespace, name));
    } catch (e) {
      throw this.mapError(e, name);
    }
  }

  async delete(ctx: RequestContext, name: string, options: DeleteRequestOptions): Promise<{ object: KubeObject; deleted: boolean }> {
    this.requireVerb('delete');
    const key = this.keys.objectKey(ctx.namespace, name);
    const c = this.strategyContext(ctx);
    const opts: DeleteRequestOptions = { ...options, preconditions: options.preconditions ? { ...options.preconditions } : undefined };
    let current: KubeObject | null;
    try {
      current = await this.storage.get(key);
    } catch (e) {
      throw this.mapError(e, name);
    }
    if (!current) throw errors.notFound(this.ref(name));

    const probe = clone(current);
    const decision = beforeDelete(this.strategy, probe, opts, c.now, this.info.group, this.info.kind);
    if (decision.pending) return { object: this.deletedResponse(current), deleted: false };

    const policy = this.strategy.defaultGarbageCollectionPolicy(c);
    const pendingFinalizers = (current.metadata.finalizers ?? []).length > 0;
    const gc = this.deletionFinalizers(policy, current, opts);
    let ignoreNotFound = false;
    let out: KubeObject | undefined;
    let lastExisting: KubeObject | undefined;
    const preconditions = { ...(opts.preconditions ?? {}) };

    if (decision.graceful || pendingFinalizers || gc.changed) {
      const r = await this.updateForGracefulDeletionAndFinalizers(ctx, key, name, opts, policy);
      if (r.kind === 'kept') return { object: this.fromStorage(r.object), deleted: false };
      if (r.kind === 'alreadyDeleting') return { object: this.deletedResponse(current), deleted: false };
      out = r.object;
      lastExisting = r.lastExisting;
      ignoreNotFound = r.kind === 'deleteAfterGrace';
      if (out && preconditions.resourceVersion !== undefined) preconditions.resourceVersion = out.metadata.resourceVersion;
    }
    // a dry run goes on to the storage delete (which checks preconditions and admission and
    // answers with the object as stored: the marks above were not written), as kube-apiserver does

    let deleted: KubeObject;
    try {
      deleted = await this.storage.delete(key, {
        preconditions: preconditions.uid !== undefined || preconditions.resourceVersion !== undefined ? preconditions : undefined,
        validateDeletion: (obj) => this.validateAdmission(ctx, 'DELETE', null, obj, name),
        dryRun: ctx.dryRun,
        signal: ctx.cancellation?.signal,
      });
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound') && ignoreNotFound && lastExisting) {
        return { object: this.deletedResponse(lastExisting), deleted: true };
      }
      throw this.mapError(e, name);
    }
    if (!ctx.dryRun) await this.strategy.afterDelete?.(deleted, c);
    return { object: this.deletedResponse(deleted), deleted: true };
  }

  /**
   * Writes the deletion marks (deletionTimestamp, grace period, garbage-collector finalizers)
   * and says what is left to do: keep the object, delete it now, or nothing (a graceful
   * deletion already pending).
   */
  private async updateForGracefulDeletionAndFinalizers(
    ctx: RequestContext,
    key: string,
    name: string,
    opts: DeleteRequestOptions,
    policy: ReturnType<ResourceStrategy['defaultGarbageCollectionPolicy']>,
  ): Promise<
    | { kind: 'kept'; object: KubeObject }
    | { kind: 'alreadyDeleting' }
    | { kind: 'deleteNow' | 'deleteAfterGrace'; object?: KubeObject; lastExisting?: KubeObject }
  > {
    let pendingFinalizers = false;
    let lastGraceful = 0;
    let lastExisting: KubeObject | undefined;
    const preconditions = opts.preconditions;
    let stored: KubeObject;
    try {
      stored = await this.storage.guaranteedUpdate(
        key,
        async (existing) => {
          if (!existing) throw errors.notFound(this.ref(name));
          await this.validateAdmission(ctx, 'DELETE', null, existing, name);
          const obj = clone(existing);
          const attemptOpts = { ...opts };
          const d = beforeDelete(this.strategy, obj, attemptOpts, this.now(), this.info.group, this.info.kind);
          if (d.pending) throw new AlreadyDeleting();
          const gc = this.deletionFinalizers(policy, obj, attemptOpts);
          if (gc.changed) obj.metadata.finalizers = gc.finalizers;
          pendingFinalizers = (obj.metadata.finalizers ?? []).length > 0;
          if (!d.graceful) {
            if (pendingFinalizers) {
              markAsDeleting(obj, this.now());
              return orderObject(obj);
            }
            throw new DeleteNow();
          }
          lastGraceful = attemptOpts.gracePeriodSeconds ?? 0;
          lastExisting = obj;
          return orderObject(obj);
        },
        { preconditions, dryRun: ctx.dryRun, signal: ctx.cancellation?.signal },
      );
    } catch (e) {
      if (e instanceof DeleteNow) return { kind: 'deleteNow', lastExisting };
      if (e instanceof AlreadyDeleting) return { kind: 'alreadyDeleting' };
      throw this.mapError(e, name);
    }
    if (pendingFinalizers || lastGraceful > 0) return { kind: 'kept', object: stored };
    // graceful deletion with a zero grace period: remove it now (another deleter may win)
    return { kind: 'deleteAfterGrace', object: stored, lastExisting };
  }

  async deleteCollection(ctx: RequestContext, opts: DeleteRequestOptions, listOpts: ListRequestOptions): Promise<ListObject> {
    this.requireVerb('deletecollection');
    const hasLimit = (listOpts.limit ?? 0) > 0;
    const pageOpts: ListRequestOptions = { ...listOpts, limit: hasLimit ? listOpts.limit : deleteCollectionPageSize };
    let first: ListObject | undefined;
    const items: KubeObject[] = [];
    for (;;) {
      const page = await this.list(ctx, pageOpts);
      first ??= page;
      items.push(...page.items);
      await forEachConcurrently(page.items, this.deleteCollectionWorkers, async (item) => {
        const itemCtx: RequestContext = { ...ctx, namespace: item.metadata.namespace ?? ctx.namespace };
        try {
          await this.delete(itemCtx, item.metadata.name ?? '', clone(opts));
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 404)) throw e;
        }
      });
      if (hasLimit || !page.metadata.continue) {
        if (hasLimit) return page;
        break;
      }
      pageOpts.continue = page.metadata.continue;
      pageOpts.resourceVersion = undefined;
      pageOpts.resourceVersionMatch = undefined;
    }
    return { ...first!, metadata: { resourceVersion: first!.metadata.resourceVersion }, items };
  }
}

/** runs `fn` on every item, at most `workers` at a time; the first failure is thrown once
 *  the started calls have settled */
async function forEachConcurrently<T>(items: readonly T[], workers: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(workers, items.length)) }, worker));
  if (failure) throw failure.error;
}

function rvMatch(v: string | undefined): ResourceVersionMatch | undefined {
  return v === 'Exact' || v === 'NotOlderThan' ? v : undefined;
}

/** a Watch whose events pass through `fn` */
export function mapWatch(w: Watch, fn: (e: WatchEvent) => WatchEvent): Watch {
  // a plain iterator, not an async generator: every event of every watcher passes here, and a
  // generator adds its own promises and queue to each one
  return {
    stop: () => w.stop(),
    [Symbol.asyncIterator]: () => {
      const inner = w[Symbol.asyncIterator]();
      const map = (r: IteratorResult<WatchEvent>): IteratorResult<WatchEvent> => (r.done ? r : { done: false, value: fn(r.value) });
      return {
        next: () => inner.next().then(map),
        return: async () => {
          w.stop();
          await inner.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * kube's etcd3 store refuses a create only when the object's resourceVersion parses as a
 * non-zero uint64 (its versioner's ParseUint); one that does not parse is dropped like any
 * other and the create goes on.
 */
function nonZeroResourceVersion(rv: string | undefined): boolean {
  if (rv === undefined || !/^\d+$/.test(rv)) return false;
  const n = BigInt(rv);
  return n !== 0n && n < 2n ** 64n;
}

/** the same members with the same values at the top level, in the same order */
function sameMemberOrder(a: KubeObject, b: KubeObject): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]!] !== b[kb[i]!]) return false;
  return true;
}
