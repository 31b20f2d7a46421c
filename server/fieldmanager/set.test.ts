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
