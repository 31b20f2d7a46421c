// Defaulting on read: kube-apiserver applies a custom resource's schema defaults to objects
// as they come out of storage too, so objects written before a default was added show it.
// This wraps the Storage of a custom resource with that step on every read path.

import type { KubeObject, Storage, Watch, WatchEvent } from '../../storage/interface.js';
import { clone } from '../registry/object.js';
import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';
import { applyDefaults } from './defaulting.js';

function hasDefaults(s: JSONSchemaProps | undefined): boolean {
  if (!s) return false;
  if (s.default !== undefined) return true;
  if (Object.values(s.properties ?? {}).some(hasDefaults)) return true;
  if (typeof s.additionalProperties === 'object' && hasDefaults(s.additionalProperties)) return true;
  return hasDefaults(s.items);
}

export function defaultingStorage(inner: Storage, schema: JSONSchemaProps | undefined): Storage {
  if (!hasDefaults(schema)) return inner;
  // reads hand out fresh objects: defaulted in place
  const fresh = (o: KubeObject): KubeObject => {
    applyDefaults(o, schema);
    return o;
  };
  // watch events may be shared between watchers: defaulted on a copy
  const shared = (ev: WatchEvent): WatchEvent => {
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') return ev;
    const o = clone(ev.object);
    applyDefaults(o, schema);
    return { type: ev.type, object: o };
  };
  const wrapper: Storage = {
    revisionSpace: inner.revisionSpace,
    create: (key, obj, opts) => inner.create(key, obj, opts),
    get: async (key, opts) => {
      const o = await inner.get(key, opts);
      return o ? fresh(o) : o;
    },
    getList: async (key, opts) => {
      const r = await inner.getList(key, opts);
      r.items.forEach(fresh);
      return r;
    },
    guaranteedUpdate: (key, tryUpdate, opts) => inner.guaranteedUpdate(key, tryUpdate, opts),
    delete: (key, opts) => inner.delete(key, opts),
    deleteUnreadable: (key) => inner.deleteUnreadable(key),
    watch: async (key, opts) => {
      const w = await inner.watch(key, opts);
      const out: Watch = {
        stop: () => w.stop(),
        async *[Symbol.asyncIterator]() {
          for await (const ev of w) yield shared(ev);
        },
      };
      return out;
    },
    currentResourceVersion: () => inner.currentResourceVersion(),
    count: (key) => inner.count(key),
    get ready() {
      return inner.ready;
    },
    close: () => inner.close(),
  };
  return wrapper;
}
