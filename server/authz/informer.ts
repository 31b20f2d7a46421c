// A watch-fed copy of one resource (client-go's informer, in process): list, then watch from
// the list's revision; a watch that ends resumes from the last revision seen, one that fails
// (410 Expired, an ERROR event) relists. Every replica runs its own, so each sees writes
// made through any replica within the watch latency. Reads are synchronous map lookups.

import { setMaxListeners } from 'node:events';
import type { KubeObject, ObjectMeta, Watch } from '../../storage/interface.js';
import type { RESTResource } from '../registry/rest.js';
import { internalContext } from '../controllers/util.js';
import type { Logger } from '../log.js';
import { ByNamespace } from '../machinery/by-namespace.js';
import { isObject } from '../registry/object.js';

const fieldManager = 'kube-apiserver';

export type InformerListener = (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject, old?: KubeObject) => void;

export interface Informer {
  readonly resource: RESTResource;
  get(namespace: string, name: string): KubeObject | undefined;
  /** every object, or those of one namespace */
  list(namespace?: string): KubeObject[];
  /** whether it holds any object of the namespace */
  hasAnyIn(namespace: string): boolean;
  /** resolves once the first list is in */
  readonly synced: Promise<void>;
  readonly hasSynced: boolean;
  /** called for every change after it is applied (not for the initial list's objects
   *  when `initial` is false) */
  onChange(listener: InformerListener): () => void;
  stop(): void;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export interface InformerOptions {
  /** only objects matching this field selector (e.g. `metadata.name=x`) */
  fieldSelector?: string;
  /**
   * What the informer keeps of each object, and what its listeners and readers see; default:
   * the whole object. The informers run inside the API server (kube runs them in the
   * controller manager), so a decoded copy of every object of a resource would cost each
   * replica several times what the watch cache holds of it: an informer whose owner reads a
   * few fields keeps only those (see `slimObject`).
   */
  keep?: (obj: KubeObject) => KubeObject;
  /** `keep` and the listeners read nothing but the metadata (and not its managedFields):
   *  changes may be watched as metadata alone. A function answers per object, when its change is delivered (objects
   *  listed are always whole): true where the metadata is enough. `keep` must cope with both. */
  metadataOnly?: boolean | ((namespace: string, name: string) => boolean);
}

/** the metadata informers key and compare by, plus `rest`: an object small enough to keep for
 *  every member of a large resource (pods) */
export function slimObject(obj: KubeObject, rest: Omit<Partial<KubeObject>, 'metadata'> = {}): KubeObject {
  const m = obj.metadata;
  const metadata: Record<string, unknown> = {};
  for (const k of SLIM_META) if (m[k] !== undefined) metadata[k] = m[k];
  // made empty and filled: an empty literal has room for four properties in the object
  // itself, where a literal with its metadata would put the rest in a property array of their own
  const out = {} as KubeObject;
  out.metadata = metadata as ObjectMeta;
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) out[k] = v;
  return out;
}

/** `{ phase }` of a pod's status, one frozen object per phase value shared by every slim pod
 *  (informers keep thousands that differ in nothing else); a phase outside the few known is
 *  given an object of its own */
export function phaseOnly(status: unknown): { phase?: unknown } {
  const phase = isObject(status) ? status.phase : undefined;
  if (typeof phase !== 'string' || !POD_PHASES.has(phase)) return phase === undefined ? NO_PHASE : { phase };
  let shared = phaseStatuses.get(phase);
  if (!shared) phaseStatuses.set(phase, (shared = Object.freeze({ phase })));
  return shared;
}

const POD_PHASES = new Set(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']);
const phaseStatuses = new Map<string, { phase: string }>();
const NO_PHASE = Object.freeze({});

const SLIM_META = ['name', 'namespace', 'uid', 'resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const;

export function startInformer(resource: RESTResource, log: Logger, parent?: AbortSignal, opts: InformerOptions = {}): Informer {
  const abort = new AbortController();
  const signal = abort.signal;
  // every list and watch of the loop listens on it for a while: not a leak
  setMaxListeners(100, signal);
  parent?.addEventListener('abort', () => abort.abort(), { once: true });
  const keep = opts.keep ?? ((obj: KubeObject) => obj);
  const objects = new ByNamespace<KubeObject>();
  const listeners = new Set<InformerListener>();
  let markSynced!: () => void;
  const synced = new Promise<void>((r) => {
    markSynced = r;
  });
  let hasSynced = false;
  // A parent aborted already fires no 'abort'. Its informer still lists once, since whoever
  // started it may be waiting on `synced`, and then stops instead of watching for good.
  const stopOnceSynced = parent?.aborted === true;

  const put = (obj: KubeObject): KubeObject | undefined => objects.set(obj.metadata.namespace ?? '', obj.metadata.name ?? '', obj);
  const remove = (ns: string, name: string): KubeObject | undefined => objects.delete(ns, name);
  const emit: InformerListener = (type, obj, old) => {
    for (const l of listeners) {
      try {
        l(type, obj, old);
      } catch (err) {
        log.error('informer listener failed', { resource: resource.info.resource, err: (err as Error).message });
      }
    }
  };

  const relist = async (): Promise<string> => {
    const ctx = internalContext(fieldManager, '', signal);
    const items: KubeObject[] = [];
    let rv = '';
    let cont: string | undefined;
    do {
      const page = await resource.list(ctx, { limit: 500, continue: cont, fieldSelector: opts.fieldSelector });
      if (!cont) rv = page.metadata.resourceVersion;
      for (const item of page.items) items.push(keep(item));
      cont = page.metadata.continue || undefined;
    } while (cont && !signal.aborted);
    const seen = new ByNamespace<true>();
    for (const obj of items) {
      seen.set(obj.metadata.namespace ?? '', obj.metadata.name ?? '', true);
      const old = put(obj);
      if (!old) emit('ADDED', obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) emit('MODIFIED', obj, old);
    }
    objects.deleteAbsentFrom(seen, (old) => emit('DELETED', old));
    return rv;
  };

  const run = async () => {
    let rv: string | undefined;
    let retryMs = 100;
    while (!signal.aborted) {
      let watch: Watch | undefined;
      const stopWatch = () => watch?.stop();
      signal.addEventListener('abort', stopWatch, { once: true });
      try {
        if (rv === undefined) {
          rv = await relist();
          if (!hasSynced) {
            hasSynced = true;
            markSynced();
          }
          if (stopOnceSynced) {
            abort.abort();
            break;
          }
        }
        watch = await resource.watch(internalContext(fieldManager, '', signal), {
          resourceVersion: rv,
          allowWatchBookmarks: true,
          fieldSelector: opts.fieldSelector,
          metadataOnly: opts.metadataOnly,
        });
        if (signal.aborted) watch.stop();
        for await (const ev of watch) {
          retryMs = 100;
          if (ev.type === 'ERROR') {
            rv = undefined;
            break;
          }
          rv = ev.object.metadata?.resourceVersion || rv;
          if (ev.type === 'BOOKMARK') continue;
          const obj = keep(ev.object);
          if (ev.type === 'DELETED') {
            const old = remove(obj.metadata.namespace ?? '', obj.metadata.name ?? '');
            emit('DELETED', obj, old);
          } else {
            const old = put(obj);
            emit(old ? 'MODIFIED' : 'ADDED', obj, old);
          }
        }
      } catch (err) {
        if (signal.aborted) break;
        if ((err as { code?: unknown }).code === 410) rv = undefined;
        log.warn('informer: list/watch failed', {
          resource: `${resource.info.group}/${resource.info.resource}`,
          err: (err as Error).message,
        });
      } finally {
        signal.removeEventListener('abort', stopWatch);
        watch?.stop();
      }
      await wait(retryMs, signal);
      retryMs = Math.min(retryMs * 2, 5000);
    }
  };
  void run();

  return {
    resource,
    get: (ns, name) => objects.get(ns, name),
    list: (ns) => (ns === undefined ? [...objects.values()] : [...(objects.namespace(ns)?.values() ?? [])]),
    hasAnyIn: (ns) => objects.namespace(ns) !== undefined,
    synced,
    get hasSynced() {
      return hasSynced;
    },
    onChange(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    stop: () => abort.abort(),
  };
}
