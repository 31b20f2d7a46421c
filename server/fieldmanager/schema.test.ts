import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../storage/interface.js';
import type { SchemaNode, SchemaRegistry } from '../apis/schema.js';
import type { ResourceInfo } from '../apis/types.js';
import { StatusError } from '../machinery/status.js';
import { FieldManagers } from './field-managers.js';
import type { ManagedFieldsEntry } from './managed.js';
import { TypeModel } from './schema.js';
import type { JsonMap } from './value.js';

/** a schema registry over a handful of definitions (the shape loadSchemas() serves) */
function registry(defs: Record<string, SchemaNode>): SchemaRegistry {
  const resolve = (n: SchemaNode): SchemaNode => (n.ref !== undefined && defs[n.ref] ? resolve(defs[n.ref]) : n);
  const byKind = (group: string, version: string, kind: string) =>
    Object.keys(defs).find((name) => defs[name].gvk?.some((g) => g.group === group && g.version === version && g.kind === kind));
  return {
    names: () => Object.keys(defs).sort(),
    definition: (name) => defs[name],
    definitionNameFor: byKind,
    schemaFor: (g, v, k) => {
      const name = byKind(g, v, k);
      return name ? defs[name] : undefined;
    },
    resolve,
    field: (n, name) => resolve(n).properties?.[name],
    elements: (n) => resolve(n).items,
    at: () => undefined,
    closure: () => new Set(),
  };
}

const meta: SchemaNode = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    managedFields: { type: 'array', items: { type: 'object' }, listType: 'atomic' },
  },
};
const item: SchemaNode = { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } };
const defs: Record<string, SchemaNode> = {
  'test.Meta': meta,
  'test.Item': item,
  'test.Widget': {
    type: 'object',
    gvk: [{ group: 'example.com', version: 'v1', kind: 'Widget' }],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { ref: 'test.Meta' },
      spec: {
        type: 'object',
        properties: {
          // no list type: the patch strategy decides
          byMergeKey: { type: 'array', items: { ref: 'test.Item' }, patchStrategy: 'merge', patchMergeKey: 'name' },
          mergeNoKey: { type: 'array', items: { type: 'string' }, patchStrategy: 'merge' },
          retainKeys: { type: 'array', items: { ref: 'test.Item' }, patchStrategy: 'retainKeys', patchMergeKey: 'name' },
          plain: { type: 'array', items: { type: 'string' } },
          // the list type wins over the patch strategy
          explicitAtomic: { type: 'array', items: { ref: 'test.Item' }, listType: 'atomic', patchStrategy: 'merge', patchMergeKey: 'name' },
          atomicMap: { type: 'object', additionalProperties: { type: 'string' }, mapType: 'atomic' },
          granularMap: { type: 'object', additionalProperties: { type: 'string' } },
          raw: { type: 'object' },
        },
      },
    },
  },
};

const widgets: ResourceInfo = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  singularName: 'widget',
  kind: 'Widget',
  listKind: 'WidgetList',
  namespaced: true,
  verbs: ['create', 'get', 'patch', 'update'],
  shortNames: [],
  categories: [],
  subresources: [],
  storageVersion: 'v1',
  preferredVersion: 'v1',
  storageVersionHash: '',
  definition: 'test.Widget',
};
const gadgets: ResourceInfo = { ...widgets, resource: 'gadgets', kind: 'Gadget', listKind: 'GadgetList', definition: '' };

const managers = new FieldManagers(registry(defs));
const fm = managers.for(widgets);

function widget(spec: JsonMap): JsonMap {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec };
}
function spec(o: KubeObject): JsonMap {
  return o.spec as JsonMap;
}
function ownedBy(o: KubeObject, manager: string): unknown {
  return ((o.metadata.managedFields ?? []) as ManagedFieldsEntry[]).find((e) => e.manager === manager)?.fieldsV1;
}
function throwsConflict(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  assert.fail('expected an error');
}

describe('type model', () => {
  const types = new TypeModel(registry(defs));
  const specType = types.typeOfKind('example.com', 'v1', 'Widget')!.atom().map!.fields.get('spec')!.atom().map!;
  const list = (name: string) => specType.fields.get(name)!.atom().list!;

  it('reads list types, falling back from patchStrategy=merge to a map-list by its merge key', () => {
    assert.deepEqual([list('byMergeKey').atomic, list('byMergeKey').keys], [false, ['name']]);
    assert.deepEqual([list('mergeNoKey').atomic, list('mergeNoKey').keys], [false, []]);
    assert.equal(list('retainKeys').atomic, true);
    assert.equal(list('plain').atomic, true);
    assert.equal(list('explicitAtomic').atomic, true);
  });

  it('reads map types; an object without structure is deduced', () => {
    assert.equal(specType.fields.get('atomicMap')!.atom().map!.atomic, true);
    assert.equal(specType.fields.get('granularMap')!.atom().map!.atomic, false);
    const raw = specType.fields.get('raw')!.atom();
    assert.ok(raw.scalar && raw.list?.atomic && raw.map && !raw.map.atomic);
  });
});

describe('apply by markers', () => {
  it('a merge-key list merges by key, a key-less merge list is a set', () => {
    const o1 = fm.apply(null, widget({ byMergeKey: [{ name: 'a', value: '1' }], mergeNoKey: ['x'] }), 'one', false);
    const o2 = fm.apply(o1, widget({ byMergeKey: [{ name: 'b', value: '2' }], mergeNoKey: ['y'] }), 'two', false);
    assert.deepEqual(spec(o2).byMergeKey, [
      { name: 'a', value: '1' },
      { name: 'b', value: '2' },
    ]);
    assert.deepEqual(spec(o2).mergeNoKey, ['x', 'y']);
    assert.deepEqual(ownedBy(o2, 'two'), {
      'f:spec': { 'f:byMergeKey': { 'k:{"name":"b"}': { '.': {}, 'f:name': {}, 'f:value': {} } }, 'f:mergeNoKey': { 'v:"y"': {} } },
    });
  });

  it('atomic lists and maps are replaced whole and conflict whole', () => {
    const o1 = fm.apply(null, widget({ plain: ['a'], atomicMap: { k: 'v' }, retainKeys: [{ name: 'a' }] }), 'one', false);
    assert.deepEqual(ownedBy(o1, 'one'), { 'f:spec': { 'f:atomicMap': {}, 'f:plain': {}, 'f:retainKeys': {} } });
    const err = throwsConflict(() => fm.apply(o1, widget({ plain: ['b'], atomicMap: { k: 'v', other: 'x' } }), 'two', false));
    assert.equal(err.message, 'Apply failed with 2 conflicts: conflicts with "one":\n- .spec.atomicMap\n- .spec.plain');
    const o2 = fm.apply(o1, widget({ plain: ['b'] }), 'two', true);
    assert.deepEqual(spec(o2).plain, ['b']);
  });

  it('granular maps merge by key', () => {
    const o1 = fm.apply(null, widget({ granularMap: { a: '1' } }), 'one', false);
    const o2 = fm.apply(o1, widget({ granularMap: { b: '2' } }), 'two', false);
    assert.deepEqual(spec(o2).granularMap, { a: '1', b: '2' });
  });

  it('a granular owner of a field that is now atomic owns it whole (and conflicts)', () => {
    // ownership recorded when `atomicMap` was granular
    const live = {
      ...widget({ atomicMap: { k: 'v' } }),
      metadata: {
        name: 'w',
        namespace: 'default',
        uid: 'u',
        managedFields: [
          {
            manager: 'old',
            operation: 'Apply',
            apiVersion: 'example.com/v1',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:atomicMap': { 'f:k': {} } } },
          },
        ],
      },
    } as unknown as KubeObject;
    const err = throwsConflict(() => fm.apply(live, widget({ atomicMap: { other: 'x' } }), 'new', false));
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "old": .spec.atomicMap');
  });
});

describe('a kind without a schema (custom resources)', () => {
  const g = managers.for(gadgets);
  const gadget = (s: JsonMap) => ({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: s });

  it('treats every list as atomic and every map as granular', () => {
    const o1 = g.apply(null, gadget({ items: [{ name: 'a' }], m: { a: '1' } }), 'one', false);
    // with no declared fields, every member is owned as itself too
    assert.deepEqual(ownedBy(o1, 'one'), { 'f:spec': { '.': {}, 'f:items': {}, 'f:m': { '.': {}, 'f:a': {} } } });
    const o2 = g.apply(o1, gadget({ m: { b: '2' } }), 'two', false);
    assert.deepEqual((o2.spec as JsonMap).m, { a: '1', b: '2' });
    const err = throwsConflict(() => g.apply(o2, gadget({ items: [{ name: 'b' }] }), 'two', false));
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "one": .spec.items');
  });
});
