import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { test } from 'node:test';
import { AbsentOwnerCache } from './absent-owners.js';
import { alternateOwnerIdentity, GraphBuilder, referencesDiff, type GraphEvent } from './graph-builder.js';
import { DependencyGraph, GraphNode } from './graph.js';
import { ownerReferencesOf, type ObjectIdentity, type ObjectMetaSnapshot, type OwnerReference } from './types.js';

interface Recorded {
  deletes: string[];
  rateLimited: string[];
  orphans: string[];
  invalid: Array<{ dependent: string; owner: string }>;
}

function setup() {
  const rec: Recorded = { deletes: [], rateLimited: [], orphans: [], invalid: [] };
  const absent = new AbsentOwnerCache();
  const builder = new GraphBuilder(
    new DependencyGraph(),
    {
      attemptToDelete: (uid, o) => (o?.rateLimited ? rec.rateLimited : rec.deletes).push(uid),
      attemptToOrphan: (uid) => rec.orphans.push(uid),
    },
    absent,
    (dependent, owner) => rec.invalid.push({ dependent: dependent.uid, owner: owner.uid }),
  );
  const clear = () => {
    rec.deletes.length = 0;
    rec.rateLimited.length = 0;
    rec.orphans.length = 0;
    rec.invalid.length = 0;
  };
  return { rec, absent, builder, graph: builder.graph, clear };
}

function meta(uid: string, name: string, namespace: string, extra: Partial<ObjectMetaSnapshot> = {}): ObjectMetaSnapshot {
  return { uid, name, namespace, resourceVersion: '1', ownerReferences: [], finalizers: [], ...extra };
}

function ref(uid: string, name: string, kind = 'ReplicaSet', apiVersion = 'apps/v1', blockOwnerDeletion?: boolean): OwnerReference {
  const r: OwnerReference = { apiVersion, kind, name, uid };
  if (blockOwnerDeletion !== undefined) r.blockOwnerDeletion = blockOwnerDeletion;
  return r;
}

const pod = (type: GraphEvent['type'], object: ObjectMetaSnapshot, old?: ObjectMetaSnapshot): GraphEvent => ({
  type,
  apiVersion: 'v1',
  kind: 'Pod',
  object,
  old,
});
const rs = (type: GraphEvent['type'], object: ObjectMetaSnapshot, old?: ObjectMetaSnapshot): GraphEvent => ({
  type,
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  object,
  old,
});

test('a dependent seen before its owner makes a virtual owner node, verified by the collector, observed later', () => {
  const { rec, builder, graph, clear } = setup();
  builder.process(pod('add', meta('p1', 'web-1', 'ns', { ownerReferences: [ref('r1', 'web')] })));
  const owner = graph.get('r1');
  assert.ok(owner);
  assert.equal(owner.virtual, true);
  assert.deepEqual(owner.identity, { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'r1', namespace: 'ns' });
  assert.deepEqual(
    [...owner.dependents].map((d) => d.identity.uid),
    ['p1'],
  );
  assert.deepEqual(rec.deletes, ['r1'], 'the virtual owner is verified');

  clear();
  builder.process(rs('add', meta('r1', 'web', 'ns')));
  assert.equal(graph.get('r1'), owner, 'the same node, now observed');
  assert.equal(owner.virtual, false);
  assert.deepEqual(rec.deletes, [], 'a dependent that named it correctly needs no check');
});

test('an owner seen with other coordinates than a dependent gave sends that dependent to the collector', () => {
  const { rec, builder, graph, clear } = setup();
  builder.process(pod('add', meta('p1', 'a', 'ns', { ownerReferences: [ref('r1', 'wrong-name')] })));
  clear();
  builder.process(rs('add', meta('r1', 'web', 'ns')));
  assert.equal(graph.get('r1')?.identity.name, 'web');
  assert.deepEqual(rec.deletes, ['p1']);
});

test('the deletion of an owner queues its dependents and records it as absent', () => {
  const { rec, absent, builder, graph, clear } = setup();
  builder.process(rs('add', meta('r1', 'web', 'ns')));
  builder.process(pod('add', meta('p1', 'a', 'ns', { ownerReferences: [ref('r1', 'web')] })));
  builder.process(pod('add', meta('p2', 'b', 'ns', { ownerReferences: [ref('r1', 'web')] })));
  clear();
  builder.process(rs('delete', meta('r1', 'web', 'ns')));
  assert.equal(graph.get('r1'), undefined);
  assert.deepEqual(rec.deletes.sort(), ['p1', 'p2']);
  assert.ok(absent.has({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'r1', namespace: 'ns' }));
});

test('deletion in foreground marks the owner and queues it with its dependents; a dependent going queues it again', () => {
  const { rec, builder, graph, clear } = setup();
  builder.process(rs('add', meta('r1', 'web', 'ns')));
  builder.process(pod('add', meta('p1', 'a', 'ns', { ownerReferences: [ref('r1', 'web', 'ReplicaSet', 'apps/v1', true)] })));
  clear();
  const before = meta('r1', 'web', 'ns');
  builder.process(rs('update', meta('r1', 'web', 'ns', { deletionTimestamp: 'now', finalizers: ['foregroundDeletion'] }), before));
  const owner = graph.get('r1')!;
  assert.equal(owner.deletingDependents, true);
  assert.equal(owner.beingDeleted, true);
  assert.deepEqual(
    owner.blockingDependents().map((d) => d.identity.uid),
    ['p1'],
  );
  assert.deepEqual(rec.deletes, ['p1', 'r1']);

  clear();
  builder.process(pod('delete', meta('p1', 'a', 'ns', { ownerReferences: [ref('r1', 'web', 'ReplicaSet', 'apps/v1', true)] })));
  assert.deepEqual(rec.deletes, ['r1'], 'the owner waiting in foreground is looked at again');
  assert.deepEqual(owner.blockingDependents(), []);
});

test('a watch that first sees an object already deleting in foreground or orphaning still acts on it', () => {
  const { rec, builder, graph } = setup();
  builder.process(rs('add', meta('r1', 'a', 'ns', { deletionTimestamp: 'now', finalizers: ['foregroundDeletion'] })));
  builder.process(rs('add', meta('r2', 'b', 'ns', { deletionTimestamp: 'now', finalizers: ['orphan'] })));
  assert.equal(graph.get('r1')?.deletingDependents, true);
  assert.deepEqual(rec.deletes, ['r1']);
  assert.deepEqual(rec.orphans, ['r2']);
});

test('orphaning starts once, when the orphan finalizer and the deletionTimestamp first appear together', () => {
  const { rec, builder, clear } = setup();
  builder.process(rs('add', meta('r1', 'web', 'ns', { finalizers: ['orphan'] })));
  assert.deepEqual(rec.orphans, [], 'a finalizer alone is no deletion');
  clear();
  const deleting = meta('r1', 'web', 'ns', { finalizers: ['orphan'], deletionTimestamp: 'now' });
  builder.process(rs('update', deleting, meta('r1', 'web', 'ns', { finalizers: ['orphan'] })));
  assert.deepEqual(rec.orphans, ['r1']);
  clear();
  builder.process(rs('update', { ...deleting, resourceVersion: '2' }, deleting));
  assert.deepEqual(rec.orphans, []);
});

test('removing or unblocking a blocking reference queues the owner', () => {
  const { rec, builder, clear } = setup();
  builder.process(rs('add', meta('r1', 'web', 'ns')));
  builder.process(rs('add', meta('r2', 'other', 'ns')));
  const refs = [ref('r1', 'web', 'ReplicaSet', 'apps/v1', true), ref('r2', 'other', 'ReplicaSet', 'apps/v1', true)];
  const first = meta('p1', 'a', 'ns', { ownerReferences: refs });
  builder.process(pod('add', first));
  clear();
  const second = meta('p1', 'a', 'ns', { ownerReferences: [ref('r2', 'other', 'ReplicaSet', 'apps/v1', false)] });
  builder.process(pod('update', second, first));
  assert.deepEqual(rec.deletes.sort(), ['r1', 'r2']);
});

test('an observed namespaced owner named from another namespace is reported and its dependent checked', () => {
  const { rec, builder, clear } = setup();
  builder.process({ type: 'add', apiVersion: 'v1', kind: 'ConfigMap', object: meta('c1', 'owner', 'ns-a') });
  clear();
  builder.process(pod('add', meta('p1', 'a', 'ns-b', { ownerReferences: [ref('c1', 'owner', 'ConfigMap', 'v1')] })));
  assert.deepEqual(rec.invalid, [{ dependent: 'p1', owner: 'c1' }]);
  assert.deepEqual(rec.deletes, ['p1']);
});

test('a virtual delete of a virtual owner whose dependents disagree on its identity tries the other identity', () => {
  const { rec, absent, builder, graph, clear } = setup();
  builder.process(pod('add', meta('p1', 'a', 'ns', { ownerReferences: [ref('x1', 'web', 'ReplicaSet')] })));
  builder.process(pod('add', meta('p2', 'b', 'ns', { ownerReferences: [ref('x1', 'web', 'StatefulSet')] })));
  clear();
  const absentId: ObjectIdentity = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'x1', namespace: 'ns' };
  builder.process({ type: 'delete', virtual: true, apiVersion: 'apps/v1', kind: 'ReplicaSet', object: meta('x1', 'web', 'ns') });
  const node = graph.get('x1');
  assert.ok(node, 'kept: another dependent names it otherwise');
  assert.equal(node.identity.kind, 'StatefulSet');
  assert.deepEqual(rec.deletes, ['p1'], 'the dependent that named the absent identity is checked');
  assert.deepEqual(rec.rateLimited, ['x1'], 'the other identity is verified next');
  assert.ok(absent.has(absentId));

  // the collector deletes p1 (its owner is absent); then the other identity is found absent too
  clear();
  builder.process(pod('delete', meta('p1', 'a', 'ns', { ownerReferences: [ref('x1', 'web', 'ReplicaSet')] })));
  builder.process({ type: 'delete', virtual: true, apiVersion: 'apps/v1', kind: 'StatefulSet', object: meta('x1', 'web', 'ns') });
  assert.equal(graph.get('x1'), undefined);
  assert.deepEqual(rec.deletes, ['p2']);
});

test('a virtual delete does not remove an observed node known by other coordinates', () => {
  const { rec, builder, graph, clear } = setup();
  builder.process(rs('add', meta('r1', 'web', 'ns')));
  builder.process(pod('add', meta('p1', 'a', 'ns', { ownerReferences: [ref('r1', 'web', 'Deployment')] })));
  clear();
  builder.process({ type: 'delete', virtual: true, apiVersion: 'apps/v1', kind: 'Deployment', object: meta('r1', 'web', 'ns') });
  assert.ok(graph.get('r1'));
  assert.deepEqual(rec.deletes, ['p1']);
});

test('referencesDiff and alternateOwnerIdentity', () => {
  const a = ref('1', 'a');
  const b = ref('2', 'b');
  const b2 = { ...b, controller: true };
  const c = ref('3', 'c');
  assert.deepEqual(referencesDiff([a, b], [b2, c]), { added: [c], removed: [a], changed: [{ old: b, cur: b2 }] });

  const dep = new GraphNode({ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'p', namespace: 'ns' }, false);
  dep.owners = [ref('o', 'n', 'B'), ref('o', 'n', 'C'), ref('o', 'n', 'A')];
  const absent = { apiVersion: 'apps/v1', kind: 'B', name: 'n', uid: 'o', namespace: 'ns' };
  assert.equal(alternateOwnerIdentity([dep], absent)?.kind, 'C', 'the first identity after the absent one');
  assert.equal(alternateOwnerIdentity([dep], { ...absent, kind: 'C' })?.kind, 'A', 'else the first of all');
});

test('objects of one owner share one owner list; a reference that differs gets its own', () => {
  const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid', controller: true, blockOwnerDeletion: true };
  const pod = (name: string, ref: OwnerReference): KubeObject => ({ metadata: { name, namespace: 'ns', ownerReferences: [{ ...ref }] } });
  const a = ownerReferencesOf(pod('a', { ...owner }));
  assert.equal(ownerReferencesOf(pod('b', { ...owner })), a);
  assert.deepEqual(a, [owner]);
  const unblocked = ownerReferencesOf(pod('c', { ...owner, blockOwnerDeletion: false }));
  assert.notEqual(unblocked, a);
  assert.equal(unblocked[0]!.blockOwnerDeletion, false);
  assert.deepEqual(ownerReferencesOf({ metadata: { name: 'd' } }), []);
});

test('a node makes its dependents set with the first and drops it with the last', () => {
  const id = (uid: string): ObjectIdentity => ({ apiVersion: 'v1', kind: 'Pod', name: uid, namespace: 'ns', uid });
  const owner = new GraphNode(id('o'), false);
  const dep = new GraphNode(id('d'), false);
  assert.equal(owner.dependents.size, 0);
  owner.addDependent(dep);
  assert.deepEqual([...owner.dependents], [dep]);
  owner.removeDependent(dep);
  assert.equal(owner.dependents.size, 0);
  assert.equal(new GraphNode(id('x'), false).dependents, owner.dependents);
});
