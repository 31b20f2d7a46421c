// The etcd3 store: kapi's Storage straight over etcd, with kube-apiserver's etcd3 semantics
// (k8s.io/apiserver pkg/storage/etcd3/store.go). Keys given to it are relative
// (`/pods/default/web`); the etcd key is `<prefix>/pods/default/web`. Objects are stored as
// JSON without resourceVersion (codec.ts); every object read gets resourceVersion =
// mod_revision, every list the revision it was read at.

import {
  isCompactedError,
  isFutureRevisionError,
  isLeaseNotFoundError,
  isTooManyOpsError,
  isRequestTooLargeError,
  isUnavailableError,
  type EtcdError,
} from '../etcd/errors.js';
import { prefixEnd, type Compare, type EtcdClient, type KeyValue, type RangeResponse } from '../etcd/types.js';
import type { ReadCondition } from '../read-fence.js';
import { StorageError, isStorageError } from '../errors.js';
import type {
  CreateOptions,
  DeleteOptions,
  GetOptions,
  KubeObject,
  ListOptions,
  ListResult,
  Preconditions,
  Storage,
  UnreadableDeletion,
  UpdateFunction,
  UpdateOptions,
  Watch,
  WatchOptions,
} from '../interface.js';
import { rememberWrittenJson, throwIfCancelled } from '../interface.js';
import {
  decodeObject,
  encodeAnswering,
  encodeObject,
  setResourceVersion,
  withoutResourceVersion,
  type AnsweringEncoding,
} from './codec.js';
import { decodeContinue, encodeContinue } from './continue.js';
import { EtcdStoreWatch } from './watch.js';
import { readStored, type ReadResult, type TransformerLookup } from '../value/transformer.js';
import { LeaseManager } from './lease-manager.js';
import { revisionProbeFor, revisionSpaceFor, type RevisionProbe } from './revision-probe.js';

/** what a write stores, and with JSON its answer's text */
type Encoded = Pick<AnsweringEncoding, 'plain'> & Partial<Pick<AnsweringEncoding, 'answer'>>;

export interface Etcd3StoreOptions {
  /** etcd key prefix, e.g. '/registry' */
  prefix: string;
  /** page size for reading big ranges (unpaged lists, initial watch lists) */
  pagingPageSize?: number;
  /** how long a read waits for etcd to reach a requested resourceVersion before
   *  TooLargeResourceVersion */
  tooLargeResourceVersionWaitMs?: number;
  /** live events a direct watch may queue for a slow consumer before it is ended */
  watchQueueLimit?: number;
  /** encryption at rest: values are written and read through the key's transformer;
   *  undefined: values are stored as they are (the direct path) */
  transformers?: TransformerLookup;
  /** --lease-reuse-duration-seconds: how long one lease serves writes with a TTL */
  leaseReuseDurationSeconds?: number;
  /** how objects are written (CBOR with the CBORServingAndStorage gate); both are read */
  storageFormat?: 'json' | 'cbor';
}

const DEFAULT_PAGE_SIZE = 1000;
const DEFAULT_TOO_LARGE_WAIT_MS = 3000;
const TOO_LARGE_RECHECK_MS = 100;
/** how long a write whose answer was lost may wait for the cluster to say whether it applied
 *  (an etcd leader election takes about a second) */
const AMBIGUOUS_WRITE_RESOLVE_MS = 10_000;
const AMBIGUOUS_WRITE_RECHECK_MS = 200;
/** kube-apiserver's cap when a filtered paged list doubles its page size */
const MAX_LIST_PAGE = 10_000;

// kube-apiserver's messages (pkg/storage/etcd3/errors.go)
const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';
const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without ' +
  'the continue parameter, or use the continue token in this response to retrieve the remainder of the results. ' +
  'Continuing with the provided token results in an inconsistent list - objects that were created, modified, or ' +
  'deleted between the time the first chunk was returned and now may show up in the list.';

/** a compacted continue token: kube-apiserver offers a token that resumes after the same key
 *  at the latest revision (rv -1), so a client may finish an inconsistent list instead of
 *  restarting it */
function continueExpired(key: string, startKey: string, keyPrefix: string): StorageError {
  try {
    const continueToken = encodeContinue(startKey, keyPrefix, -1);
    return new StorageError('ContinueExpired', key, INCONSISTENT_CONTINUE, { continueToken });
  } catch {
    return new StorageError('ContinueExpired', key, CONTINUE_EXPIRED);
  }
}

interface Current {
  modRevision: number;
  obj: KubeObject;
  /** the stored value's plaintext, and whether it must be written again (see ReadResult) */
  plain: ReadResult;
}

/** parses a resourceVersion: '' and undefined are 0 (unset); anything but digits is invalid */
export function parseResourceVersion(rv: string | undefined, key: string): number {
  if (rv === undefined || rv === '') return 0;
  if (!/^[0-9]+$/.test(rv)) {
    throw new StorageError(
      'InvalidResourceVersion',
      key,
      `invalid resource version: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`,
    );
  }
  const n = Number(rv);
  if (!Number.isSafeInteger(n)) {
    throw new StorageError(
      'InvalidResourceVersion',
      key,
      `invalid resource version: strconv.ParseUint: parsing ${JSON.stringify(rv)}: value out of range`,
    );
  }
  return n;
}

function conditionFailed(key: string): StorageError {
  return new StorageError('ReadConditionFailed', key, `objects read for writing ${key} changed before the write; read them again`);
}

function tooLarge(key: string, requested: number, current: number): StorageError {
  return new StorageError('TooLargeResourceVersion', key, `Too large resource version: ${requested}, current: ${current}`, {
    retryAfterSeconds: 1,
  });
}

function checkPreconditions(key: string, pre: Preconditions | undefined, obj: KubeObject | null): void {
  if (!pre) return;
  const meta = obj?.metadata;
  if (pre.uid !== undefined && pre.uid !== (meta?.uid ?? '')) {
    throw new StorageError(
      'ResourceVersionConflict',
      key,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta?.uid ?? ''}`,
    );
  }
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== (meta?.resourceVersion ?? '')) {
    throw new StorageError(
      'ResourceVersionConflict',
      key,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta?.resourceVersion ?? ''}`,
    );
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Etcd3Store implements Storage {
  readonly ready = true;
  /** the prefix with exactly one trailing slash */
  private readonly pathPrefix: string;
  private readonly pageSize: number;
  private readonly tooLargeWaitMs: number;
  private readonly watches = new Set<EtcdStoreWatch>();
  private readonly leases: LeaseManager;
  private readonly revisionProbe: RevisionProbe;
  readonly revisionSpace: object;

  constructor(
    private readonly client: EtcdClient,
    private readonly opts: Etcd3StoreOptions,
  ) {
    this.pathPrefix = opts.prefix.replace(/\/+$/, '') + '/';
    this.pageSize = opts.pagingPageSize ?? DEFAULT_PAGE_SIZE;
    this.tooLargeWaitMs = opts.tooLargeResourceVersionWaitMs ?? DEFAULT_TOO_LARGE_WAIT_MS;
    this.revisionSpace = revisionSpaceFor(client, this.pathPrefix);
    this.leases = new LeaseManager(client, { reuseDurationSeconds: opts.leaseReuseDurationSeconds });
    this.revisionProbe = revisionProbeFor(client, async () => {
      // a linearizable count-only read: its header carries the cluster's current revision
      const res = await this.etcd('', () => this.client.range({ key: Buffer.from(this.pathPrefix), countOnly: true }));
      return res.header.revision;
    });
  }

  /** Runs a write that attaches the lease for `ttlSeconds` (none without a TTL). A lease etcd
   *  no longer has (revoked, or lost with a restored cluster) is forgotten and the write runs
   *  once more with a fresh one. */
  private async withLease<T>(key: string, ttlSeconds: number | undefined, write: (lease: number) => Promise<T>): Promise<T> {
    const ttl = ttlSeconds && ttlSeconds > 0 ? Math.ceil(ttlSeconds) : 0;
    if (ttl === 0) return this.etcd(key, () => write(0));
    for (let attempt = 0; ; attempt++) {
      const lease = await this.etcd(key, () => this.leases.getLease(ttl));
      try {
        return await this.etcd(key, () => write(lease));
      } catch (err) {
        if (attempt > 0 || !isLeaseNotFoundError(err)) throw err;
        this.leases.forget(lease);
      }
    }
  }

  /** the etcd key of a relative key; refuses keys that climb out of the prefix */
  private etcdKey(key: string): string {
    const segments = key.split('/');
    if (key === '' || key === '/' || segments.some((s) => s === '.' || s === '..')) {
      throw new StorageError('InvalidObject', key, `invalid key: ${JSON.stringify(key)}`);
    }
    return this.pathPrefix + (key.startsWith('/') ? key.slice(1) : key);
  }

  /** runs an etcd call; an unreachable etcd becomes StorageError Unavailable, a write over
   *  etcd's request size RequestTooLarge */
  private async etcd<T>(key: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (isUnavailableError(err)) throw new StorageError('Unavailable', key, `etcd unavailable: ${(err as EtcdError).message}`);
      if (isRequestTooLargeError(err)) throw new StorageError('RequestTooLarge', key, (err as EtcdError).message);
      throw err;
    }
  }

  /**
   * A write whose answer was lost (its member failed after the request left) may or may not
   * have been applied. Once the cluster answers again (any member, a linearizable read), the
   * key tells: what is stored now, to compare with what was sent. Undefined when the cluster
   * stays silent; the write's error then stands.
   */
  private async readBack(etcdKey: string): Promise<RangeResponse | undefined> {
    const deadline = Date.now() + AMBIGUOUS_WRITE_RESOLVE_MS;
    for (;;) {
      try {
        return await this.client.range({ key: Buffer.from(etcdKey) });
      } catch (err) {
        if (!isUnavailableError(err) || Date.now() >= deadline) return undefined;
        await sleep(AMBIGUOUS_WRITE_RECHECK_MS);
      }
    }
  }

  private async readCurrent(key: string, etcdKey: string, signal?: AbortSignal): Promise<Current | null> {
    const res = await this.etcd(key, () => this.client.range({ key: Buffer.from(etcdKey), signal }));
    return this.current(key, res.kvs[0]);
  }

  private current(key: string, kv: KeyValue | undefined): Current | null {
    if (!kv) return null;
    const plain = this.plaintext(kv);
    return { modRevision: kv.modRevision, obj: decodeObject(plain.data, kv.modRevision, key), plain };
  }

  /** What a write answers: the object it stored (`plain`, encoded from `obj`) at
   *  `revision`. Stored as JSON, that is `obj` with the resourceVersion set: its top level and
   *  metadata copied, the rest shared (parsing the bytes just encoded cost every write; every
   *  encoder of answers leaves out undefined members, as JSON does). CBOR is decoded, as what
   *  it reads back may differ from the object (e.g. numbers). */
  private written(obj: KubeObject, encoded: Encoded, revision: number, key: string): KubeObject {
    if (this.opts.storageFormat === 'cbor') return decodeObject(encoded.plain, revision, key);
    const out = setResourceVersion(obj, revision);
    if (encoded.answer) rememberWrittenJson(out, encoded.answer(revision));
    return out;
  }

  /** what a write stores; as JSON, with its answer's text made by the same encoding */
  private encode(obj: KubeObject): Encoded {
    if (this.opts.storageFormat === 'cbor') return { plain: encodeObject(obj, 'cbor') };
    return encodeAnswering(obj) ?? { plain: encodeObject(obj) };
  }

  /** a stored value's plaintext, through the key's transformer if there is one */
  private plaintext(kv: KeyValue): ReadResult {
    if (!this.opts.transformers) return { data: kv.value, stale: false };
    const etcdKey = kv.key.toString();
    const relativeKey = etcdKey.slice(this.pathPrefix.length - 1);
    const t = this.opts.transformers.forKey(relativeKey);
    return t ? readStored(t, kv.value, etcdKey, relativeKey) : { data: kv.value, stale: false };
  }

  /** decodes a stored value; `key` names the object in errors */
  private decodeKv(kv: KeyValue, key: string): KubeObject {
    if (!this.opts.transformers) return decodeObject(kv.value, kv.modRevision, key);
    return decodeObject(this.plaintext(kv).data, kv.modRevision, key);
  }

  /** what etcd stores for `plain` at `etcdKey` */
  private sealed(etcdKey: string, plain: Buffer): Buffer {
    const t = this.opts.transformers?.forKey(etcdKey.slice(this.pathPrefix.length - 1));
    if (!t) return plain;
    try {
      return t.toStorage(plain, Buffer.from(etcdKey));
    } catch (err) {
      throw new StorageError('InvalidObject', etcdKey, `unable to transform key ${JSON.stringify(etcdKey)}: ${(err as Error).message}`);
    }
  }

  /** Waits (bounded) until etcd's revision reaches `minimum`; TooLargeResourceVersion if it
   *  does not. `revision` is the revision a read already saw; the caller reads again. */
  private async awaitRevision(key: string, minimum: number, revision: number, signal?: AbortSignal): Promise<void> {
    if (minimum <= revision) return;
    const deadline = Date.now() + this.tooLargeWaitMs;
    let current = revision;
    while (Date.now() < deadline) {
      await sleep(TOO_LARGE_RECHECK_MS);
      signal?.throwIfAborted();
      current = await this.currentResourceVersion();
      if (current >= minimum) return;
    }
    throw tooLarge(key, minimum, current);
  }

  async create(key: string, obj: KubeObject, opts: CreateOptions = {}): Promise<KubeObject> {
    const etcdKey = this.etcdKey(key);
    const encoded = this.encode(obj);
    const plain = encoded.plain;
    if (opts.dryRun) {
      const res = await this.etcd(key, () => this.client.range({ key: Buffer.from(etcdKey), countOnly: true }));
      if (res.count > 0) throw new StorageError('KeyExists', key, `key already exists: ${key}`);
      return withoutResourceVersion(obj);
    }
    const data = this.sealed(etcdKey, plain);
    const k = Buffer.from(etcdKey);
    const conditions = opts.conditions?.length ? this.conditionCompares(opts.conditions) : undefined;
    const write = () =>
      this.withLease(key, opts.ttlSeconds, (lease) =>
        this.client.txn({
          compare: conditions
            ? [{ key: k, target: 'CREATE', result: 'EQUAL', value: 0 }, ...conditions]
            : [{ key: k, target: 'CREATE', result: 'EQUAL', value: 0 }],
          success: [{ put: { key: k, value: data, lease } }],
          // with conditions, whether the key is there tells which compare failed
          failure: conditions ? [{ range: { key: k, countOnly: true } }] : [],
        }),
      );
    let res;
    try {
      res = await write();
    } catch (err) {
      // a cluster whose --max-txn-ops is below what the conditions need: the writer reads strictly
      if (conditions && isTooManyOpsError(err)) throw conditionFailed(key);
      if (!isStorageError(err, 'Unavailable')) throw err;
      const now = await this.readBack(etcdKey);
      if (!now) throw err;
      const kv = now.kvs[0];
      // our bytes are there: the create was applied
      if (kv?.value.equals(data)) return this.written(obj, encoded, kv.modRevision, key);
      if (kv) throw new StorageError('KeyExists', key, `key already exists: ${key}`);
      // not applied; a create only succeeds on an absent key, so once more is safe
      res = await write();
    }
    if (!res.succeeded) {
      const found = res.responses[0];
      if (conditions && found && 'range' in found && found.range.count === 0) throw conditionFailed(key);
      throw new StorageError('KeyExists', key, `key already exists: ${key}`);
    }
    return this.written(obj, encoded, res.header.revision, key);
  }

  /** the compares that check reads a write relies on (see read-fence.ts) */
  private conditionCompares(conditions: readonly ReadCondition[]): Compare[] {
    const compares: Compare[] = [];
    for (const c of conditions) {
      if (c.recursive) {
        // nothing in the range is newer than the read
        const k = Buffer.from(this.etcdKey(c.key));
        compares.push({ key: k, rangeEnd: prefixEnd(k), target: 'MOD', result: 'LESS', value: c.revision + 1 });
      }
      // and every object read (or found absent) is as it was
      for (const [key, modRevision] of c.objects) {
        compares.push({ key: Buffer.from(this.etcdKey(key)), target: 'MOD', result: 'EQUAL', value: modRevision });
      }
    }
    return compares;
  }

  async get(key: string, opts: GetOptions = {}): Promise<KubeObject | null> {
    const etcdKey = this.etcdKey(key);
    const minimum = parseResourceVersion(opts.resourceVersion, key);
    const read = () =>
      this.etcd(key, () =>
        this.client.range({ key: Buffer.from(etcdKey), serializable: opts.resourceVersion === '0', signal: opts.signal }),
      );
    let res = await read();
    if (res.header.revision < minimum) {
      await this.awaitRevision(key, minimum, res.header.revision, opts.signal);
      res = await read();
    }
    const kv = res.kvs[0];
    if (!kv) {
      if (opts.ignoreNotFound) return null;
      throw new StorageError('KeyNotFound', key, `key not found: ${key}`);
    }
    return this.decodeKv(kv, key);
  }

  async getList(key: string, opts: ListOptions): Promise<ListResult> {
    let keyPrefix = this.etcdKey(key);
    // `/pods/ns` must not also list `/pods/ns2/...`
    if (opts.recursive && !keyPrefix.endsWith('/')) keyPrefix += '/';
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;

    // which revision to read at (0: the latest), and where to start
    let readRevision = 0;
    let startKey = keyPrefix;
    let minimum = 0;
    const continuing = opts.recursive && !!opts.continue;
    if (continuing) {
      if (opts.resourceVersion && opts.resourceVersion !== '0') {
        throw new StorageError('InvalidContinue', key, 'specifying resource version is not allowed when using continue');
      }
      const pos = decodeContinue(opts.continue!, keyPrefix);
      readRevision = pos.revision;
      startKey = pos.startKey;
    } else {
      const rv = parseResourceVersion(opts.resourceVersion, key);
      if (rv > 0) {
        const exact = opts.resourceVersionMatch === 'Exact' || (opts.resourceVersionMatch === undefined && opts.recursive && limit > 0);
        if (exact) readRevision = rv;
        else minimum = rv;
      }
    }
    const serializable = opts.resourceVersion === '0' && !continuing;

    const read = async () => {
      const list = opts.recursive
        ? await this.listRange(key, keyPrefix, startKey, readRevision, limit, serializable, opts)
        : await this.listOne(key, keyPrefix, readRevision, serializable, opts);
      if (Number(list.resourceVersion) >= minimum) return list;
      // not older than `minimum`: wait for etcd to get there, then read again
      await this.awaitRevision(key, minimum, Number(list.resourceVersion), opts.signal);
      return opts.recursive
        ? await this.listRange(key, keyPrefix, startKey, readRevision, limit, serializable, opts)
        : await this.listOne(key, keyPrefix, readRevision, serializable, opts);
    };
    try {
      try {
        return await read();
      } catch (err) {
        if (!isFutureRevisionError(err)) throw err;
        // an exact read of a revision etcd has not reached yet: wait a little for it
        await this.awaitRevision(key, readRevision, await this.currentResourceVersion(), opts.signal);
        return await read();
      }
    } catch (err) {
      if (!isCompactedError(err)) throw err;
      if (continuing) throw continueExpired(key, startKey, keyPrefix);
      const compacted = await this.compactedRevision(readRevision);
      throw new StorageError(
        'ResourceVersionTooOld',
        key,
        `too old resource version: ${readRevision}${compacted ? ` (${compacted})` : ''}`,
        compacted ? { oldestAvailable: compacted } : {},
      );
    }
  }

  private async listOne(key: string, etcdKey: string, readRevision: number, serializable: boolean, opts: ListOptions): Promise<ListResult> {
    const res = await this.etcd(key, () =>
      this.client.range({ key: Buffer.from(etcdKey), revision: readRevision || undefined, serializable, signal: opts.signal }),
    );
    const items = res.kvs.map((kv) => this.decodeKv(kv, key)).filter((o) => opts.predicate.matches(o));
    return { items, resourceVersion: String(readRevision || res.header.revision), continue: '' };
  }

  private async listRange(
    key: string,
    keyPrefix: string,
    startKey: string,
    readRevision: number,
    limit: number,
    serializable: boolean,
    opts: ListOptions,
  ): Promise<ListResult> {
    const rangeEnd = prefixEnd(Buffer.from(keyPrefix));
    const items: KubeObject[] = [];
    if (limit === 0) {
      // everything, read in pages at one revision
      const res = await this.etcd(key, () =>
        this.client.rangeAll({
          key: Buffer.from(startKey),
          rangeEnd,
          revision: readRevision || undefined,
          serializable,
          pageSize: this.pageSize,
          signal: opts.signal,
        }),
      );
      for (const kv of res.kvs) {
        const obj = this.decodeKv(kv, kv.key.toString());
        if (opts.predicate.matches(obj)) items.push(obj);
      }
      return { items, resourceVersion: String(readRevision || res.header.revision), continue: '' };
    }

    // paged: fill `limit` matching items, reading more pages while the predicate drops some
    let revision = readRevision;
    let from = Buffer.from(startKey);
    let pageLimit = limit;
    let lastKey: Buffer | null = null;
    let hasMore = false;
    let remaining = 0;
    for (;;) {
      const page: RangeResponse = await this.etcd(key, () =>
        this.client.range({ key: from, rangeEnd, limit: pageLimit, revision: revision || undefined, serializable, signal: opts.signal }),
      );
      if (revision === 0) revision = page.header.revision;
      hasMore = page.more;
      let consumed = 0;
      for (const kv of page.kvs) {
        if (items.length >= limit) {
          hasMore = true;
          break;
        }
        consumed++;
        lastKey = kv.key;
        const obj = this.decodeKv(kv, kv.key.toString());
        if (opts.predicate.matches(obj)) items.push(obj);
      }
      remaining = page.count - consumed;
      if (!hasMore || items.length >= limit || !lastKey) break;
      from = Buffer.concat([lastKey, Buffer.from([0])]);
      // the predicate dropped items: read bigger pages (as kube-apiserver does)
      pageLimit = Math.min(pageLimit * 2, MAX_LIST_PAGE);
    }
    const result: ListResult = { items, resourceVersion: String(revision), continue: '' };
    if (hasMore && lastKey) {
      result.continue = encodeContinue(lastKey.toString() + '\u0000', keyPrefix, revision);
      if (opts.predicate.isEverything) result.remainingItemCount = remaining;
    }
    return result;
  }

  /** the revision etcd has compacted to, learned from a watch that starts at a compacted
   *  `revision` (etcd cancels it and names the compaction revision) */
  private compactedRevision(revision: number): Promise<number> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        watcher.cancel();
        resolve(0);
      }, 2000);
      const watcher = this.client.watch({ key: Buffer.from(this.pathPrefix), startRevision: Math.max(1, revision) }, (msg) => {
        if (msg.kind === 'events') return;
        if (msg.kind === 'progress') return;
        clearTimeout(timer);
        watcher.cancel();
        resolve(msg.compactRevision);
      });
    });
  }

  async guaranteedUpdate(key: string, tryUpdate: UpdateFunction, opts: UpdateOptions = {}): Promise<KubeObject> {
    const etcdKey = this.etcdKey(key);
    const k = Buffer.from(etcdKey);
    const read = () => this.readCurrent(key, etcdKey, opts.signal);
    // a cached object saves a read; a CBOR store compares its bytes with what it writes, which
    // the cache's JSON text cannot stand for
    const cached = opts.cached && this.opts.storageFormat !== 'cbor' ? opts.cached : undefined;
    let cur: Current | null = cached
      ? { modRevision: cached.modRevision, obj: cached.object, plain: { data: cached.text, stale: false } }
      : await read();
    // false while `cur` is the cache's, which may be behind etcd: whatever it makes fail or
    // leaves unchanged is decided again on what etcd holds
    let isCurrent = !cached;
    for (;;) {
      // a retry after a lost race is new work: not for a request that has gone
      throwIfCancelled(opts);
      if (!cur && !opts.allowCreate) throw new StorageError('KeyNotFound', key, `key not found: ${key}`);
      let updated: KubeObject;
      try {
        checkPreconditions(key, opts.preconditions, cur?.obj ?? null);
        updated = await tryUpdate(cur ? cur.obj : null);
      } catch (err) {
        if (isCurrent) throw err;
        const cachedRevision = cur?.modRevision;
        cur = await read();
        isCurrent = true;
        // the cache was current after all: its answer stands
        if (cur?.modRevision === cachedRevision) throw err;
        continue;
      }
      const encoded = this.encode(updated);
      const plain = encoded.plain;
      // a value read through an old provider or key is written again even when unchanged
      if (cur && !cur.plain.stale && plain.equals(cur.plain.data)) {
        if (!isCurrent) {
          cur = await read();
          isCurrent = true;
          continue;
        }
        // nothing changed: no write, the resourceVersion stays (as kube-apiserver does)
        return this.written(updated, encoded, cur.modRevision, key);
      }
      if (opts.dryRun) {
        return cur ? setResourceVersion(updated, cur.modRevision) : withoutResourceVersion(updated);
      }
      const data = this.sealed(etcdKey, plain);
      // a write with a TTL gets a lease that starts the TTL over (kube refreshes it on update)
      let res;
      try {
        res = await this.withLease(key, opts.ttlSeconds, (lease) =>
          this.client.txn({
            // a missing key has mod revision 0, so this also covers the allowCreate case
            compare: [{ key: k, target: 'MOD', result: 'EQUAL', value: cur ? cur.modRevision : 0 }],
            success: [{ put: { key: k, value: data, lease } }],
            failure: [{ range: { key: k } }],
          }),
        );
      } catch (err) {
        if (!isStorageError(err, 'Unavailable')) throw err;
        const now = await this.readBack(etcdKey);
        if (!now) throw err;
        const kv = now.kvs[0];
        if (kv?.value.equals(data)) return this.written(updated, encoded, kv.modRevision, key);
        // not applied: as after a lost race, try again on what is there now
        cur = this.current(key, kv);
        isCurrent = true;
        continue;
      }
      if (res.succeeded) return this.written(updated, encoded, res.header.revision, key);
      // someone else wrote in between (or the cache was behind): try again on what is there now
      const r = res.responses[0];
      cur = this.current(key, r && 'range' in r ? r.range.kvs[0] : undefined);
      isCurrent = true;
    }
  }

  async delete(key: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    const etcdKey = this.etcdKey(key);
    const k = Buffer.from(etcdKey);
    let cur = await this.readCurrent(key, etcdKey, opts.signal);
    for (;;) {
      throwIfCancelled(opts);
      if (!cur) throw new StorageError('KeyNotFound', key, `key not found: ${key}`);
      checkPreconditions(key, opts.preconditions, cur.obj);
      await opts.validateDeletion?.(cur.obj);
      if (opts.dryRun) return cur.obj;
      const expected = cur.modRevision;
      let res;
      try {
        res = await this.etcd(key, () =>
          this.client.txn({
            compare: [{ key: k, target: 'MOD', result: 'EQUAL', value: expected }],
            success: [{ deleteRange: { key: k } }],
            failure: [{ range: { key: k } }],
          }),
        );
      } catch (err) {
        if (!isStorageError(err, 'Unavailable')) throw err;
        const now = await this.readBack(etcdKey);
        if (!now) throw err;
        // gone: the delete was applied (its revision is not known; the read's is after it)
        if (!now.kvs[0]) return setResourceVersion(cur.obj, now.header.revision);
        cur = this.current(key, now.kvs[0]);
        continue;
      }
      if (res.succeeded) {
        // kube-apiserver answers with the last state at the revision of the deletion
        return setResourceVersion(cur.obj, res.header.revision);
      }
      const r = res.responses[0];
      cur = this.current(key, r && 'range' in r ? r.range.kvs[0] : undefined);
    }
  }

  async deleteUnreadable(key: string): Promise<UnreadableDeletion> {
    const etcdKey = this.etcdKey(key);
    const k = Buffer.from(etcdKey);
    const res = await this.etcd(key, () => this.client.range({ key: k }));
    const kv = res.kvs[0];
    if (!kv) return 'absent';
    try {
      this.current(key, kv);
      return 'readable';
    } catch (err) {
      if (!isStorageError(err, 'InvalidObject')) throw err;
    }
    // only the value that could not be read: a rewrite in between is someone else's object
    const del = await this.etcd(key, () =>
      this.client.txn({
        compare: [{ key: k, target: 'MOD', result: 'EQUAL', value: kv.modRevision }],
        success: [{ deleteRange: { key: k } }],
        failure: [],
      }),
    );
    return del.succeeded ? 'deleted' : this.deleteUnreadable(key);
  }

  async watch(key: string, opts: WatchOptions): Promise<Watch> {
    let etcdKey = this.etcdKey(key);
    if (opts.recursive && !etcdKey.endsWith('/')) etcdKey += '/';
    const k = Buffer.from(etcdKey);
    const rangeEnd = opts.recursive ? prefixEnd(k) : undefined;
    const rv = parseResourceVersion(opts.resourceVersion, key);
    // initial events: asked for, or by default when no resourceVersion (or '0') was given
    const initialEvents = opts.sendInitialEvents ?? rv === 0;

    let initial: KeyValue[] = [];
    let after: number;
    if (initialEvents) {
      if (rv > 0) await this.awaitRevision(key, rv, await this.currentResourceVersion(), opts.signal);
      const list = await this.etcd(key, () =>
        this.client.rangeAll({ key: k, rangeEnd, pageSize: this.pageSize, serializable: opts.resourceVersion === '0' }),
      );
      initial = list.kvs;
      after = list.header.revision;
    } else if (rv > 0) {
      after = rv;
    } else {
      after = await this.currentResourceVersion();
    }

    const w: EtcdStoreWatch = new EtcdStoreWatch({
      client: this.client,
      etcdKey: k,
      rangeEnd,
      startRevision: after + 1,
      predicate: opts.predicate,
      bookmarks: opts.allowWatchBookmarks ?? false,
      requestedResourceVersion: opts.resourceVersion ?? '',
      initial,
      initialEventsEndRevision: opts.sendInitialEvents === true && opts.allowWatchBookmarks ? after : 0,
      maxQueued: this.opts.watchQueueLimit,
      plaintext: this.opts.transformers ? (kv) => this.plaintext(kv).data : undefined,
      onStop: () => this.watches.delete(w),
    });
    this.watches.add(w);
    return w;
  }

  currentResourceVersion(): Promise<number> {
    return this.revisionProbe.current();
  }

  async count(key: string): Promise<number> {
    let etcdKey = this.etcdKey(key);
    if (!etcdKey.endsWith('/')) etcdKey += '/';
    const k = Buffer.from(etcdKey);
    const res = await this.etcd(key, () => this.client.range({ key: k, rangeEnd: prefixEnd(k), countOnly: true }));
    return res.count;
  }

  async close(): Promise<void> {
    for (const w of [...this.watches]) w.stop();
  }
}

export function createEtcd3Store(client: EtcdClient, opts: Etcd3StoreOptions): Storage {
  return new Etcd3Store(client, opts);
}
