// The storage one served version of a webhook-converted CRD reads and writes through: objects
// leave storage converted to that version and enter it converted to the storage version, as
// kube-apiserver's storage codec does for custom resources. The REST store above keeps
// labelling objects with apiVersions as it always does; this layer only changes their shape.
// A watch whose event cannot be converted ends (kube stops the stream when it cannot encode).

import type { KubeObject, Storage, Watch, WatchEvent } from '../../../storage/interface.js';

/** what converts objects: see WebhookConverter.convert */
export interface ObjectConverter {
  convert(objects: readonly KubeObject[], desiredAPIVersion: string, list: boolean, signal?: AbortSignal): Promise<KubeObject[]>;
}

export interface ConvertingStorageOptions {
  converter: ObjectConverter;
  /** `<group>/<version>` the REST store above speaks */
  servedAPIVersion: string;
  /** `<group>/<version>` objects are stored in */
  storageAPIVersion: string;
  log?: { warn(msg: string, kv?: Record<string, unknown>): void };
}

export function convertingStorage(inner: Storage, opts: ConvertingStorageOptions): Storage {
  const { converter, servedAPIVersion, storageAPIVersion } = opts;
  // a stored object says which version it is in; objects written before kapi recorded it
  // are in the storage version
  const stored = (o: KubeObject): KubeObject => (o.apiVersion ? o : { ...o, apiVersion: storageAPIVersion });
  const out = async (o: KubeObject): Promise<KubeObject> => (await converter.convert([stored(o)], servedAPIVersion, false))[0]!;
  // the store above labels a request object with the storage version before writing; its
  // shape is still the served version's
  const into = async (o: KubeObject): Promise<KubeObject> =>
    (await converter.convert([{ ...o, apiVersion: servedAPIVersion }], storageAPIVersion, false))[0]!;

  const convertEvent = async (ev: WatchEvent): Promise<WatchEvent> => {
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') return ev;
    return { type: ev.type, object: await out(ev.object) };
  };

  return {
    revisionSpace: inner.revisionSpace,
    create: async (key, obj, o) => out(await inner.create(key, await into(obj), o)),
    get: async (key, o) => {
      const got = await inner.get(key, o);
      return got ? out(got) : got;
    },
    getList: async (key, o) => {
      const r = await inner.getList(key, o);
      // one review for the whole page, as kube converts a list in one call
      const items = r.items.length > 0 ? await converter.convert(r.items.map(stored), servedAPIVersion, true) : r.items;
      return { ...r, items };
    },
    guaranteedUpdate: async (key, tryUpdate, o) =>
      out(await inner.guaranteedUpdate(key, async (current) => into(await tryUpdate(current ? await out(current) : null)), o)),
    deleteUnreadable: (key) => inner.deleteUnreadable(key),
    delete: async (key, o) => {
      const validate = o?.validateDeletion;
      const deleted = await inner.delete(key, validate ? { ...o, validateDeletion: async (cur) => validate(await out(cur)) } : o);
      return out(deleted);
    },
    watch: async (key, o) => {
      const w = await inner.watch(key, o);
      const log = opts.log;
      const converted: Watch = {
        stop: () => w.stop(),
        async *[Symbol.asyncIterator]() {
          for await (const ev of w) {
            let next: WatchEvent;
            try {
              next = await convertEvent(ev);
            } catch (err) {
              log?.warn('unable to convert watch object; ending the watch', { error: (err as Error).message });
              w.stop();
              return;
            }
            yield next;
          }
        },
      };
      return converted;
    },
    currentResourceVersion: () => inner.currentResourceVersion(),
    count: (key) => inner.count(key),
    get ready() {
      return inner.ready;
    },
    close: () => inner.close(),
  };
}
