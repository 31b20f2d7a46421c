import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromFieldsV1, toFieldsV1 } from './fields-v1.js';
import { keyElement, parsePathElement, pathString, serializePathElement, type Path } from './path.js';
import { FieldSet } from './set.js';

const f = (name: string) => ({ field: name });
const k = (fields: Record<string, string | number>) => keyElement(Object.entries(fields).map(([name, value]) => ({ name, value })));

describe('path elements', () => {
  it('serialize as FieldsV1 keys, map-list keys sorted by name', () => {
    assert.equal(serializePathElement(f('spec')), 'f:spec');
    assert.equal(serializePathElement(k({ protocol: 'TCP', containerPort: 80 })), 'k:{"containerPort":80,"protocol":"TCP"}');
    assert.equal(serializePathElement({ value: 'a<b' }), 'v:"a\\u003cb"');
    assert.equal(serializePathElement({ index: 3 }), 'i:3');
  });

  it('parse back, unknown kinds are skipped', () => {
    assert.deepEqual(parsePathElement('k:{"b":1,"a":"x"}'), {
      key: [
        { name: 'a', value: 'x' },
        { name: 'b', value: 1 },
      ],
    });
    assert.deepEqual(parsePathElement('v:true'), { value: true });
    assert.equal(parsePathElement('z:what'), undefined);
    assert.throws(() => parsePathElement('f'));
    assert.throws(() => parsePathElement('k:{bad'));
  });

  it('print as kube-apiserver prints conflicting fields', () => {
    const p: Path = [f('spec'), f('containers'), k({ name: 'nginx' }), f('ports'), k({ containerPort: 80, protocol: 'TCP' })];
    assert.equal(pathString(p), '.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]');
    assert.equal(pathString([f('metadata'), f('finalizers'), { value: 'x' }]), '.metadata.finalizers[="x"]');
  });
});

describe('FieldSet', () => {
  const a = FieldSet.of([f('a')], [f('b'), f('c')], [f('b'), f('d')]);
  const b = FieldSet.of([f('b'), f('c')], [f('e')]);

  it('union, intersection and difference work on paths', () => {
    assert.deepEqual(a.union(b).paths().map(pathString), ['.a', '.e', '.b.c', '.b.d']);
    assert.deepEqual(a.intersection(b).paths().map(pathString), ['.b.c']);
    assert.deepEqual(a.difference(b).paths().map(pathString), ['.a', '.b.d']);
  });

  it('recursive difference removes everything under a member', () => {
    const s = FieldSet.of([f('status')], [f('status'), f('replicas')], [f('spec'), f('replicas')]);
    assert.deepEqual(
      s
        .recursiveDifference(FieldSet.of([f('status')]))
        .paths()
        .map(pathString),
      ['.spec.replicas'],
    );
    // plain difference keeps the children
    assert.deepEqual(
      s
        .difference(FieldSet.of([f('status')]))
        .paths()
        .map(pathString),
      ['.spec.replicas', '.status.replicas'],
    );
  });

  it('has and empty', () => {
    assert.ok(a.has([f('b'), f('c')]));
    assert.ok(!a.has([f('b')]));
    assert.ok(new FieldSet().empty());
    assert.ok(!a.empty());
  });

  it('a large level given its elements out of order holds the same set as one given them in order', () => {
    const n = 3000;
    const names = Array.from({ length: n }, (_, i) => `k${String(i).padStart(5, '0')}`);
    const shuffled = names.map((_, i) => names[(i * 7919) % n]);
    const paths = (order: string[]): Path[] =>
      order.flatMap(
        (name) =>
          [
            [f('data'), f(name)],
            [f('items'), k({ name }), f('x')],
            [f('items'), k({ name }), f(name.endsWith('7') ? 'y' : 'z')],
          ] as Path[],
      );
    const inOrder = FieldSet.of(...paths(names));
    const descending = FieldSet.of(...paths([...names].reverse()));
    const mixed = FieldSet.of(...paths(shuffled), ...paths(shuffled.slice(0, 100)));
    for (const other of [descending, mixed]) {
      assert.ok(other.equals(inOrder));
      assert.deepEqual(other.paths().map(pathString), inOrder.paths().map(pathString));
    }
    assert.equal(descending.size(), n * 3);
    assert.ok(descending.has([f('data'), f(names[0])]));
    assert.ok(descending.has([f('items'), k({ name: names[n - 1] }), f('x')]));
    assert.ok(!descending.has([f('data'), f('k99999')]));
  });

  it('a large FieldsV1 given out of order decodes sorted, and its leaves are found in one pass', () => {
    const n = 2000;
    const fields: Record<string, unknown> = { 'f:data': {} };
    const data = fields['f:data'] as Record<string, unknown>;
    for (let i = n - 1; i >= 0; i--) data[`f:k${String(i).padStart(5, '0')}`] = i % 3 ? {} : { '.': {}, 'f:inner': {} };
    const set = fromFieldsV1(fields);
    const names = set.children[0].set.members.map((m) => ('field' in m ? m.field : ''));
    assert.deepEqual(names, [...names].sort());
    assert.equal(names.length, n);
    const leaves = set.leaves();
    assert.equal(leaves.children[0].set.members.length, n - Math.ceil(n / 3));
    assert.deepEqual(toFieldsV1(fromFieldsV1(toFieldsV1(set))), toFieldsV1(set));
  });
});

describe('FieldsV1', () => {
  it('round-trips with `.` for paths that are members and parents, in kube order', () => {
    const s = FieldSet.of(
      [f('metadata'), f('labels'), f('app')],
      [f('metadata'), f('labels')],
      [f('spec'), f('containers'), k({ name: 'web' })],
      [f('spec'), f('containers'), k({ name: 'web' }), f('image')],
      [f('spec'), f('replicas')],
      [f('metadata'), f('finalizers'), { value: 'b' }],
      [f('metadata'), f('finalizers'), { value: 'a' }],
    );
    const v1 = toFieldsV1(s);
    assert.equal(
      JSON.stringify(v1),
      JSON.stringify({
        'f:metadata': { 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} }, 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {} } }, 'f:replicas': {} },
      }),
    );
    assert.ok(fromFieldsV1(v1).equals(s));
  });

  it('reads an object with only `.` as a leaf and skips unknown element types', () => {
    const s = fromFieldsV1({ 'f:a': { '.': {} }, 'x:b': {}, 'f:c': {} });
    assert.deepEqual(s.paths().map(pathString), ['.a', '.c']);
  });
});
