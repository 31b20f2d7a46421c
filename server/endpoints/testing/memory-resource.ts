// An in-memory RESTResource for HTTP-level tests: enough of the registry's behaviour (names,
// resource versions, finalizers, a watch with initial events) to exercise the endpoints.
// Not a storage implementation: no etcd, no conversion, no validation.

import { randomUUID } from 'node:crypto';
import type { KubeObject, Watch, WatchEvent } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import type {
  DeleteRequestOptions,
  ListObject,
  ListRequestOptions,
  ObjectTransform,
  RESTResource,
  RequestContext,
  ResourceResolver,
  WatchRequestOptions,
} from '../../registry/rest.js';
import { errors } from '../../machinery/status.js';
import { exactFieldMatch } from '../../request/request-info.js';
import { parseLabelSelectorOrBadRequest } from '../../selectors/labels.js';

export function resourceInfo(partial: Partial<ResourceInfo> & Pick<ResourceInfo, 'resource' | 'kind'>): ResourceInfo {
  return {
    group: '',
    version: 'v1',
    singularName: partial.kind.toLowerCase(),
    listKind: `${partial.kind}List`,
    namespaced: true,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: [],
    categories: [],
    subresources: [],
    storageVersion: partial.version ?? 'v1',
    preferredVersion: partial.version ?? 'v1',
    storageVersionHash: '',
    definition: '',
    ...partial,
  };
}

/** a fan-out of events to the watchers of one MemoryStore */
class MemoryWatch implements Watch {
  private queue: WatchEvent[] = [];
  private waiting?: (r: IteratorResult<WatchEvent>) => void;
  private stopped = false;

  constructor(
    private readonly matches: (obj: KubeObject) => boolean,
    private readonly onStop: () => void,
  ) {}

  push(event: WatchEvent): void {
    if (this.stopped || (event.type !== 'BOOKMARK' && event.type !== 'ERROR' && !this.matches(event.object))) return;
    const copy = structuredClone(event);
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = undefined;
      w({ value: copy, done: false });
    } else {
      this.queue.push(copy);
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.onStop();
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = undefined;
      w({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return {
      next: () => {
        const head = this.queue.shift();
        if (head) return Promise.resolve({ value: head, done: false });
        if (this.stopped) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiting = resolve));
      },
      return: () => {
        this.stop();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

/** objects of all memory resources share one resource version counter, as etcd revisions */
export class MemoryBackend {
  revision = 100;
  next(): string {
    this.revision += 1;
    return String(this.revision);
  }
}

export class MemoryResource implements RESTResource {
  readonly objects = new Map<string, KubeObject>();
  private readonly watches = new Set<MemoryWatch>();
  /** every RequestContext the resource saw, last one last */
  readonly contexts: RequestContext[] = [];

  constructor(
    readonly info: ResourceInfo,
    private readonly backend = new MemoryBackend(),
    readonly subresource?: string,
  ) {}

  private key(namespace: string, name: string): string {
    return `${namespace}/${name}`;
  }

  private apiVersion(): string {
    return this.info.group ? `${this.info.group}/${this.info.version}` : this.info.version;
  }

  private notFound(name: string) {
    return errors.notFound({ group: this.info.group, resource: this.info.resource, name });
  }

  private emit(event: WatchEvent): void {
    for (const w of this.watches) w.push(event);
  }

  private filter(ctx: RequestContext, opts: ListRequestOptions): (obj: KubeObject) => boolean {
    const name = opts.name ?? (opts.fieldSelector ? exactFieldMatch(opts.fieldSelector, 'metadata.name') : undefined);
    const labels = parseLabelSelectorOrBadRequest(opts.labelSelector);
    return (obj) =>
      (ctx.namespace === '' || obj.metadata.namespace === ctx.namespace) &&
      (name === undefined || obj.metadata.name === name) &&
      labels.matches(obj.metadata.labels);
  }

  async get(ctx: RequestContext, name: string): Promise<KubeObject> {
    this.contexts.push(ctx);
    const obj = this.objects.get(this.key(ctx.namespace, name));
    if (!obj) throw this.notFound(name);
    return structuredClone(obj);
  }

  async list(ctx: RequestContext, opts: ListRequestOptions): Promise<ListObject> {
    this.contexts.push(ctx);
    const all = [...this.objects.values()].filter(this.filter(ctx, opts));
    const start = opts.continue ? Number(opts.continue) : 0;
    const end = opts.limit ? start + opts.limit : all.length;
    const items = all.slice(start, end).map((o) => structuredClone(o));
    const metadata: ListObject['metadata'] = { resourceVersion: String(this.backend.revision) };
    if (end < all.length) {
      metadata.continue = String(end);
      metadata.remainingItemCount = all.length - end;
    }
    return { apiVersion: this.apiVersion(), kind: this.info.listKind, metadata, items };
  }

  async watch(ctx: RequestContext, opts: WatchRequestOptions): Promise<Watch> {
    this.contexts.push(ctx);
    if (opts.resourceVersion === '1') throw errors.expired('too old resource version: 1 (100)');
    const matches = this.filter(ctx, opts);
    const w: MemoryWatch = new MemoryWatch(matches, () => this.watches.delete(w));
    const initial =
      opts.resourceVersion === undefined || opts.resourceVersion === '' || opts.resourceVersion === '0' || opts.sendInitialEvents;
    if (initial) {
      for (const obj of this.objects.values()) w.push({ type: 'ADDED', object: obj });
      if (opts.sendInitialEvents && opts.allowWatchBookmarks) {
        w.push({
          type: 'BOOKMARK',
          object: {
            kind: this.info.kind,
            apiVersion: this.apiVersion(),
            metadata: { resourceVersion: String(this.backend.revision), annotations: { 'k8s.io/initial-events-end': 'true' } },
          },
        });
      }
    }
    this.watches.add(w);
    return w;
  }

  async create(ctx: RequestContext, obj: KubeObject): Promise<KubeObject> {
    this.contexts.push(ctx);
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = meta.generateName + randomUUID().slice(0, 5);
    if (!meta.name) {
      throw errors.invalid(this.info.group, this.info.kind, '', [
        { reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' },
      ]);
    }
    const key = this.key(ctx.namespace, meta.name);
    if (this.objects.has(key)) {
      throw errors.alreadyExists({ group: this.info.group, resource: this.info.resource, name: meta.name });
    }
    const stored: KubeObject = {
      ...obj,
      metadata: {
        ...meta,
        uid: randomUUID(),
        resourceVersion: ctx.dryRun ? '' : this.backend.next(),
        creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    };
    if (stored.metadata.resourceVersion === '') delete stored.metadata.resourceVersion;
    if (ctx.dryRun) return structuredClone(stored);
    this.objects.set(key, stored);
    this.emit({ type: 'ADDED', object: stored });
    return structuredClone(stored);
  }

  async update(
    ctx: RequestContext,
    name: string,
    transform: ObjectTransform,
    opts: { allowCreate: boolean },
  ): Promise<{ object: KubeObject; created: boolean }> {
    this.contexts.push(ctx);
    const key = this.key(ctx.namespace, name);
    const current = this.objects.get(key) ?? null;
    if (!current && !opts.allowCreate) throw this.notFound(name);
    const next = await transform(current ? structuredClone(current) : null);
    if (current && next.metadata.resourceVersion && next.metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw errors.conflict(
        { group: this.info.group, resource: this.info.resource, name },
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    const stored: KubeObject = {
      ...next,
      metadata: {
        ...next.metadata,
        uid: current?.metadata.uid ?? randomUUID(),
        creationTimestamp: current?.metadata.creationTimestamp ?? new Date().toISOString(),
        resourceVersion: this.backend.next(),
      },
    };
    if (ctx.dryRun) return { object: stored, created: !current };
    this.objects.set(key, stored);
    this.emit({ type: current ? 'MODIFIED' : 'ADDED', object: stored });
    return { object: structuredClone(stored), created: !current };
  }

  async delete(ctx: RequestContext, name: string, opts: DeleteRequestOptions): Promise<{ object: KubeObject; deleted: boolean }> {
    this.contexts.push(ctx);
    const key = this.key(ctx.namespace, name);
    const current = this.objects.get(key);
    if (!current) throw this.notFound(name);
    if (opts.preconditions?.uid && opts.preconditions.uid !== current.metadata.uid) {
      throw errors.conflict({ group: this.info.group, resource: this.info.resource, name }, 'Precondition failed: UID in precondition');
    }
    if ((current.metadata.finalizers ?? []).length > 0) {
      const pending: KubeObject = {
        ...current,
        metadata: { ...current.metadata, deletionTimestamp: new Date().toISOString(), resourceVersion: this.backend.next() },
      };
      if (!ctx.dryRun) {
        this.objects.set(key, pending);
        this.emit({ type: 'MODIFIED', object: pending });
      }
      return { object: structuredClone(pending), deleted: false };
    }
    if (!ctx.dryRun) {
      this.objects.delete(key);
      this.emit({ type: 'DELETED', object: { ...current, metadata: { ...current.metadata, resourceVersion: this.backend.next() } } });
    }
    return { object: structuredClone(current), deleted: true };
  }

  async deleteCollection(ctx: RequestContext, opts: DeleteRequestOptions, listOpts: ListRequestOptions): Promise<ListObject> {
    const list = await this.list(ctx, listOpts);
    for (const obj of list.items) await this.delete({ ...ctx, namespace: obj.metadata.namespace ?? '' }, obj.metadata.name ?? '', opts);
    return list;
  }

  /** stops every open watch (the storage going away) */
  stopWatches(): void {
    for (const w of [...this.watches]) w.stop();
  }

  openWatches(): number {
    return this.watches.size;
  }
}

export class MemoryResolver implements ResourceResolver {
  private readonly byKey = new Map<string, RESTResource>();

  add(resource: RESTResource): this {
    const i = resource.info;
    this.byKey.set(`${i.group}/${i.version}/${i.resource}/${resource.subresource ?? ''}`, resource);
    return this;
  }

  lookup(group: string, version: string, resource: string, subresource?: string): RESTResource | undefined {
    return this.byKey.get(`${group}/${version}/${resource}/${subresource ?? ''}`);
  }

  all(): RESTResource[] {
    return [...this.byKey.values()];
  }
}
