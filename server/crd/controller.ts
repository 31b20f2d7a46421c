// Serving custom resources from CustomResourceDefinitions, on every replica. Each replica
// follows the CRDs (list, then watch through the registry, again after any break) and keeps
// one set of REST handlers per established CRD. It also keeps the CRDs' status (names
// accepted or in conflict, Established, storedVersions) and, for a CRD being deleted, deletes
// its custom resources before releasing the cleanup finalizer. Every replica may write the
// same status: the writes are idempotent (nothing is written when the status is already right).

import type { KubeObject, Storage, Watch } from '../../storage/interface.js';
import type { Catalog } from '../apis/catalog.js';
import type { ResourceInfo } from '../apis/types.js';
import { errors } from '../machinery/status.js';
import { selectableFields } from '../selectors/field-sets.js';
import { keyPrefixFor } from '../registry/keys.js';
import type { NamespaceLookup } from '../registry/namespace-lifecycle.js';
import { clone, jsonEqual, rfc3339 } from '../registry/object.js';
import type { RequestContext, ResourceResolver, RESTResource, WatchRequestOptions } from '../registry/rest.js';
import { GenericStore, type StoreVerb } from '../registry/store.js';
import { statusStrategy } from '../registry/strategy.js';
import type { TableConvertor } from '../registry/printers/table-convertor.js';
import { compareKubeAwareVersions } from '../apis/catalog.js';
import { CLEANUP_FINALIZER } from '../registry/apiextensions/crd-strategy.js';
import { withCleanupFinalizer } from './crd-delete.js';
import {
  conditionOf,
  resourcesOf,
  specOf,
  statusOf,
  versionOf,
  type CRDCondition,
  type CRDNames,
  type CRDStatus,
} from '../registry/apiextensions/definition.js';
import { CustomScaleStore } from './scale.js';
import { defaultingStorage } from './defaulting-storage.js';
import { storageForVersion } from './conversion/index.js';
import { validateCustomResource } from '../registry/apiextensions/schema-validation.js';
import { validateRules } from './cel.js';
import { customResourceType } from './apply-types.js';
import { setCustomKindTypes } from '../fieldmanager/schema.js';
import { customResourceStrategy } from './strategy.js';
import { customResourceTable } from './table.js';

const CRD_GROUP = 'apiextensions.k8s.io';
const CRD_RESOURCE = 'customresourcedefinitions';

export interface CustomResourceOptions {
  /** the built-in resources (the CRD store among them) */
  builtins: ResourceResolver;
  storageFor: (keyPrefix: string) => Storage;
  namespaces?: NamespaceLookup;
  now?: () => Date;
  log?: { info(msg: string, kv?: Record<string, unknown>): void; warn(msg: string, kv?: Record<string, unknown>): void };
}

interface Served {
  crd: KubeObject;
  infos: ResourceInfo[];
  handlers: Map<string, RESTResource>;
  /** open watches on its resources, ended when the CRD goes or changes (as kube) */
  watches: Set<Watch>;
}

const handlerKey = (group: string, version: string, resource: string, subresource?: string): string =>
  `${group}/${version}/${resource}${subresource ? '/' + subresource : ''}`;

function internalCtx(signal?: AbortSignal): RequestContext {
  return {
    user: { username: 'system:apiserver', groups: ['system:masters'] },
    namespace: '',
    dryRun: false,
    fieldManager: 'kube-apiserver',
    fieldValidation: 'Ignore',
    warnings: [],
    cancellation: signal ? { signal } : undefined,
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

export class CustomResources {
  private readonly crds = new Map<string, KubeObject>();
  private served = new Map<string, Served>();
  private handlers = new Map<string, RESTResource>();
  private tables = new WeakMap<RESTResource, TableConvertor>();
  private gen = 0;
  private readonly listeners: (() => void)[] = [];
  private readonly now: () => Date;
  private readonly working = new Set<string>();
  private readonly again = new Set<string>();

  constructor(private readonly opts: CustomResourceOptions) {
    this.now = opts.now ?? (() => new Date());
  }

  /** grows whenever the set of served custom resources changes */
  get generation(): number {
    return this.gen;
  }

  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  /** built-in resources first, then the custom ones */
  resolver(): ResourceResolver {
    const base = this.opts.builtins;
    const crdStore = base.lookup(CRD_GROUP, 'v1', CRD_RESOURCE);
    const crdDeletes = crdStore ? withCleanupFinalizer(crdStore) : undefined;
    const builtin = (group: string, version: string, resource: string, subresource?: string) => {
      const found = base.lookup(group, version, resource, subresource);
      return found && found === crdStore ? crdDeletes : found;
    };
    return {
      lookup: (group, version, resource, subresource) =>
        builtin(group, version, resource, subresource) ?? this.handlers.get(handlerKey(group, version, resource, subresource)),
      all: () => [...base.all().map((r) => (r === crdStore && crdDeletes ? crdDeletes : r)), ...this.handlers.values()],
    };
  }

  /** the served custom resources, sorted by group, version, resource */
  resources(): ResourceInfo[] {
    return [...this.served.values()].flatMap((s) => s.infos);
  }

  /** the CRDs whose resources are served now */
  servedCRDs(): KubeObject[] {
    return [...this.served.values()].map((s) => s.crd);
  }

  tableConvertorFor(resource: RESTResource): TableConvertor | undefined {
    return this.tables.get(resource);
  }

  /** the built-in catalog with the custom resources' groups after the built-in ones */
  catalog(base: Catalog): Catalog {
    const custom = (): ResourceInfo[] => this.resources();
    const customGroups = () => {
      const byGroup = new Map<string, Set<string>>();
      for (const r of custom()) {
        if (base.groups().some((g) => g.name === r.group)) continue;
        if (!byGroup.has(r.group)) byGroup.set(r.group, new Set());
        byGroup.get(r.group)!.add(r.version);
      }
      return [...byGroup.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, vs]) => {
          const versions = [...vs].sort((a, b) => compareKubeAwareVersions(b, a));
          return { name, versions, preferredVersion: versions[0]!, groupPriority: 1000 };
        });
    };
    const resourcesFor = (group: string, version: string): ResourceInfo[] => {
      const builtin = base.resourcesFor(group, version);
      const extra = custom().filter((r) => r.group === group && r.version === version && !builtin.some((b) => b.resource === r.resource));
      return [...builtin, ...extra].sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
    };
    return {
      resources: () => [...base.resources(), ...custom()],
      groupVersions: () => [
        ...base.groupVersions(),
        ...customGroups().flatMap((g) =>
          g.versions.map((version) => ({ group: g.name, version, resources: resourcesFor(g.name, version) })),
        ),
      ],
      groups: () => [...base.groups(), ...customGroups()],
      resourcesFor,
      isServed: (group, version) => base.isServed(group, version) || custom().some((r) => r.group === group && r.version === version),
      lookup: (group, version, resource) =>
        base.lookup(group, version, resource) ??
        custom().find((r) => r.group === group && r.version === version && r.resource === resource),
      lookupByKind: (group, version, kind) =>
        base.lookupByKind(group, version, kind) ?? custom().find((r) => r.group === group && r.version === version && r.kind === kind),
      preferredVersion: (group) => base.preferredVersion(group) ?? customGroups().find((g) => g.name === group)?.preferredVersion,
    };
  }

  private crdStore(): RESTResource {
    const s = this.opts.builtins.lookup(CRD_GROUP, 'v1', CRD_RESOURCE);
    if (!s) throw new Error('customresourcedefinitions are not served');
    return s;
  }

  /** follows the CRDs until `signal` aborts; resolves once the first list is applied */
  start(signal: AbortSignal): Promise<void> {
    // server-side apply merges custom resources by their schema's list and map types
    setCustomKindTypes((model, group, version, kind) => {
      for (const s of this.served.values()) {
        if (!s.infos.some((i) => i.group === group && i.version === version && i.kind === kind)) continue;
        return customResourceType(model, versionOf(s.crd, version)?.schema?.openAPIV3Schema);
      }
      return undefined;
    });
    signal.addEventListener('abort', () => setCustomKindTypes(undefined), { once: true });
    let firstSynced: () => void = () => {};
    const synced = new Promise<void>((resolve) => (firstSynced = resolve));
    void (async () => {
      while (!signal.aborted) {
        try {
          const store = this.crdStore();
          const list = await store.list(internalCtx(signal), {});
          const seen = new Set<string>();
          for (const item of list.items) {
            const crd = { ...item, apiVersion: `${CRD_GROUP}/v1`, kind: 'CustomResourceDefinition' };
            seen.add(crd.metadata.name ?? '');
            this.crds.set(crd.metadata.name ?? '', crd);
          }
          for (const name of [...this.crds.keys()]) if (!seen.has(name)) this.crds.delete(name);
          this.rebuild();
          firstSynced();
          const w = await store.watch(internalCtx(signal), { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true });
          const stop = () => w.stop();
          signal.addEventListener('abort', stop, { once: true });
          // aborted while the watch was opening: no 'abort' is left to stop it
          if (signal.aborted) stop();
          try {
            for await (const ev of w) {
              if (ev.type === 'ERROR') break;
              if (ev.type === 'BOOKMARK') continue;
              const name = ev.object.metadata.name ?? '';
              if (ev.type === 'DELETED') this.crds.delete(name);
              else this.crds.set(name, ev.object);
              this.rebuild();
            }
          } finally {
            signal.removeEventListener('abort', stop);
            w.stop();
          }
        } catch (err) {
          if (!signal.aborted)
            this.opts.log?.warn('following CustomResourceDefinitions failed; retrying', { error: (err as Error).message });
        }
        await sleep(500, signal);
      }
      firstSynced();
    })();
    return synced;
  }

  /**
   * The names a CRD gets and its NamesAccepted condition, as kube's naming controller decides:
   * a requested name is taken unless another accepted name of the group (its own included)
   * already uses it; a name already accepted for this CRD stays. Conflicting names keep
   * their previous accepted value.
   */
  private acceptNames(crd: KubeObject): { names: CRDNames; conflict?: { reason: string; message: string } } {
    const spec = specOf(crd);
    const requested = {
      ...spec.names,
      singular: spec.names.singular || spec.names.kind.toLowerCase(),
      listKind: spec.names.listKind || `${spec.names.kind}List`,
    };
    const accepted: CRDNames = statusOf(crd).acceptedNames ?? { plural: '', kind: '' };
    const usedResources = new Set<string>();
    const usedKinds = new Set<string>();
    for (const other of this.crds.values()) {
      if (specOf(other).group !== spec.group) continue;
      const a = statusOf(other).acceptedNames;
      if (!a) continue;
      for (const n of [a.plural, a.singular, ...(a.shortNames ?? [])]) if (n) usedResources.add(n);
      for (const n of [a.kind, a.listKind]) if (n) usedKinds.add(n);
    }
    const taken = (want: string | undefined, have: string | undefined, used: Set<string>) =>
      want !== have && want !== undefined && want !== '' && used.has(want);
    const names: CRDNames = { ...accepted };
    let conflict: { reason: string; message: string } | undefined;
    const check = (field: 'plural' | 'singular' | 'kind' | 'listKind', reason: string, used: Set<string>) => {
      if (taken(requested[field], accepted[field], used)) conflict = { reason, message: `"${requested[field]}" is already in use` };
      else names[field] = requested[field] as string;
    };
    check('plural', 'PluralConflict', usedResources);
    check('singular', 'SingularConflict', usedResources);
    const wantShort = requested.shortNames ?? [];
    if (JSON.stringify(wantShort) !== JSON.stringify(accepted.shortNames ?? [])) {
      const mine = new Set(accepted.shortNames ?? []);
      const clashes = wantShort.filter((n) => !mine.has(n) && n !== accepted.plural && n !== accepted.singular && usedResources.has(n));
      if (clashes.length > 0) {
        const msgs = clashes.map((n) => `"${n}" is already in use`);
        conflict = { reason: 'ShortNamesConflict', message: msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]` };
      } else if (wantShort.length > 0) names.shortNames = wantShort;
      else delete names.shortNames;
    }
    check('kind', 'KindConflict', usedKinds);
    check('listKind', 'ListKindConflict', usedKinds);
    if (requested.categories) names.categories = requested.categories;
    else delete names.categories;
    return { names, conflict };
  }

  private desiredStatus(crd: KubeObject): CRDStatus {
    const current = statusOf(crd);
    const now = rfc3339(this.now());
    const cond = (type: string, status: CRDCondition['status'], reason: string, message: string): CRDCondition => {
      const old = conditionOf(crd, type);
      return { type, status, lastTransitionTime: old && old.status === status ? (old.lastTransitionTime ?? now) : now, reason, message };
    };
    const { names, conflict } = this.acceptNames(crd);
    const conditions: CRDCondition[] = [];
    if (conflict) conditions.push(cond('NamesAccepted', 'False', conflict.reason, conflict.message));
    else conditions.push(cond('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found'));
    // once established a CRD stays so (with the names it had); first establishment waits for
    // every name to be accepted
    const wasEstablished = conditionOf(crd, 'Established')?.status === 'True';
    if (wasEstablished || !conflict)
      conditions.push(cond('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted'));
    else conditions.push(cond('Established', 'False', 'NotAccepted', 'not all names are accepted'));
    if (crd.metadata.deletionTimestamp)
      conditions.push(cond('Terminating', 'True', 'InstanceDeletionInProgress', 'CustomResource deletion is in progress'));
    for (const c of current.conditions ?? []) if (!conditions.some((x) => x.type === c.type)) conditions.push(c);
    return { conditions, acceptedNames: names, storedVersions: current.storedVersions ?? [] };
  }

  private rebuild(): void {
    const next = new Map<string, Served>();
    for (const [name, crd] of this.crds) {
      void this.reconcile(name);
      if (conditionOf(crd, 'Established')?.status !== 'True') continue;
      if (
        crd.metadata.deletionTimestamp &&
        conditionOf(crd, 'Terminating')?.status === 'True' &&
        !(crd.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)
      )
        continue;
      const prev = this.served.get(name);
      if (prev && prev.crd.metadata.resourceVersion === crd.metadata.resourceVersion) {
        next.set(name, prev);
        continue;
      }
      if (prev && jsonEqual(prev.crd.spec, crd.spec) && jsonEqual(statusOf(prev.crd).acceptedNames, statusOf(crd).acceptedNames)) {
        next.set(name, { ...prev, crd });
        continue;
      }
      next.set(name, this.build(crd));
    }
    const changed = next.size !== this.served.size || [...next].some(([k, v]) => this.served.get(k) !== v);
    for (const [k, old] of this.served) {
      if (next.get(k)?.handlers === old.handlers) continue;
      for (const w of old.watches) w.stop();
      old.watches.clear();
    }
    this.served = next;
    const handlers = new Map<string, RESTResource>();
    for (const s of next.values()) for (const [k, h] of s.handlers) handlers.set(k, h);
    this.handlers = handlers;
    if (changed) {
      this.gen++;
      for (const fn of this.listeners) fn();
    }
  }

  private build(crd: KubeObject): Served {
    const infos = resourcesOf(crd);
    const handlers = new Map<string, RESTResource>();
    const strategy = customResourceStrategy(crd);
    const now = this.now;
    const watches = new Set<Watch>();
    for (const info of infos) {
      // defaults of the storage version's schema, as objects come out of storage
      const storageSchema = versionOf(crd, info.storageVersion)?.schema?.openAPIV3Schema;
      const defaulted = defaultingStorage(this.opts.storageFor(keyPrefixFor(info)), storageSchema);
      // strategy Webhook: other versions than the storage one are converted by the CRD's webhook
      const storage = storageForVersion(crd, info, defaulted, this.opts.builtins, this.opts.log);
      const common = {
        info,
        storage,
        fieldsOf: selectableFields(info.namespaced),
        now,
        namespaces: info.namespaced ? this.opts.namespaces : undefined,
        garbageCollection: true,
      };
      const main = new CustomResourceStore({ ...common, strategy }, () => this.terminating(crd.metadata.name ?? ''), watches);
      handlers.set(handlerKey(info.group, info.version, info.resource), main);
      const version = versionOf(crd, info.version);
      const table = customResourceTable(version?.additionalPrinterColumns);
      this.tables.set(main, table);
      if (version?.subresources?.status) {
        const statusVerbs: ReadonlySet<StoreVerb> = new Set(['get', 'update']);
        const schema = version.schema?.openAPIV3Schema;
        const st = new GenericStore({
          ...common,
          subresource: 'status',
          verbs: statusVerbs,
          strategy: statusStrategy(strategy, {
            validateStatus: (obj, old) => [
              ...validateCustomResource(obj as unknown as Record<string, unknown>, schema),
              ...validateRules(obj, old, schema, '', true),
            ],
          }),
        });
        handlers.set(handlerKey(info.group, info.version, info.resource, 'status'), st);
        this.tables.set(st, table);
      }
      if (version?.subresources?.scale) {
        handlers.set(handlerKey(info.group, info.version, info.resource, 'scale'), new CustomScaleStore(main, version.subresources.scale));
      }
    }
    return { crd, infos, handlers, watches };
  }

  private terminating(name: string): boolean {
    const crd = this.crds.get(name);
    return !!crd && (crd.metadata.deletionTimestamp !== undefined || conditionOf(crd, 'Terminating')?.status === 'True');
  }

  /** writes the CRD's status when it differs; runs the deletion cleanup of a deleted CRD */
  private async reconcile(name: string): Promise<void> {
    if (this.working.has(name)) {
      // a change arrived while this CRD was being worked on: look again once done
      this.again.add(name);
      return;
    }
    this.working.add(name);
    try {
      const crd = this.crds.get(name);
      if (!crd) return;
      const desired = this.desiredStatus(crd);
      const current = statusOf(crd);
      if (!jsonEqual(stripTimes(desired), stripTimes(current))) {
        const statusStore = this.opts.builtins.lookup(CRD_GROUP, 'v1', CRD_RESOURCE, 'status');
        await statusStore?.update(
          internalCtx(),
          name,
          (cur) => {
            if (!cur) throw errors.notFound({ group: CRD_GROUP, resource: CRD_RESOURCE, name });
            if (cur.metadata.resourceVersion !== crd.metadata.resourceVersion)
              throw errors.conflict({ group: CRD_GROUP, resource: CRD_RESOURCE, name }, 'changed meanwhile');
            const next = clone(cur);
            next.status = desired as unknown as Record<string, unknown>;
            return next;
          },
          { allowCreate: false },
        );
        return;
      }
      if (crd.metadata.deletionTimestamp && (crd.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) await this.cleanup(crd);
    } catch (err) {
      const e = err as { code?: number };
      if (e.code !== 409 && e.code !== 404)
        this.opts.log?.warn('CustomResourceDefinition status not written', { name, error: (err as Error).message });
    } finally {
      this.working.delete(name);
      if (this.again.delete(name)) void this.reconcile(name);
    }
  }

  /** deletes every custom resource of a deleted CRD, then lets the CRD go */
  private async cleanup(crd: KubeObject): Promise<void> {
    const name = crd.metadata.name ?? '';
    const spec = specOf(crd);
    const storageVersion = spec.versions.find((v) => v.storage)?.name ?? '';
    const info = resourcesOf({
      ...crd,
      spec: { ...(crd.spec as Record<string, unknown>), versions: spec.versions.map((v) => ({ ...v, served: v.name === storageVersion })) },
    })[0];
    if (info) {
      const store = new GenericStore({
        info,
        storage: this.opts.storageFor(keyPrefixFor(info)),
        strategy: customResourceStrategy(crd),
        fieldsOf: selectableFields(info.namespaced),
        now: this.now,
      });
      const ctx = internalCtx();
      for (let i = 0; i < 600; i++) {
        const items = (await store.list(ctx, {})).items;
        if (items.length === 0) break;
        for (const item of items) {
          try {
            await store.delete({ ...ctx, namespace: item.metadata.namespace ?? '' }, item.metadata.name ?? '', {});
          } catch (err) {
            if ((err as { code?: number }).code !== 404) throw err;
          }
        }
        const left = (await store.list(ctx, {})).items;
        if (left.length === 0) break;
        await new Promise((r) => setTimeout(r, 1000));
        if (!this.crds.has(name)) return;
      }
    }
    const crdStore = this.crdStore();
    await crdStore.update(
      internalCtx(),
      name,
      (cur) => {
        if (!cur) throw errors.notFound({ group: CRD_GROUP, resource: CRD_RESOURCE, name });
        const next = clone(cur);
        next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
        return next;
      },
      { allowCreate: false },
    );
  }
}

function stripTimes(s: CRDStatus): unknown {
  return { ...s, conditions: (s.conditions ?? []).map((c) => ({ ...c, lastTransitionTime: undefined })) };
}

/** a custom resource's store: no creates once its CRD is being deleted (kube's 405) */
class CustomResourceStore extends GenericStore {
  constructor(
    cfg: ConstructorParameters<typeof GenericStore>[0],
    private readonly crdTerminating: () => boolean,
    private readonly openWatches: Set<Watch>,
  ) {
    super(cfg);
  }

  override async watch(ctx: RequestContext, opts: WatchRequestOptions): Promise<Watch> {
    const w = await super.watch(ctx, opts);
    const watches = this.openWatches;
    watches.add(w);
    return {
      stop: () => {
        watches.delete(w);
        w.stop();
      },
      async *[Symbol.asyncIterator]() {
        try {
          yield* w;
        } finally {
          watches.delete(w);
        }
      },
    };
  }

  override create(ctx: RequestContext, obj: KubeObject): Promise<KubeObject> {
    if (this.crdTerminating()) throw errors.methodNotAllowed('create not allowed while custom resource definition is terminating');
    return super.create(ctx, obj);
  }
}
