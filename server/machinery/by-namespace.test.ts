import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ByNamespace } from './by-namespace.js';

describe('ByNamespace', () => {
  it('keeps values by namespace and name, counts them and drops empty namespaces', () => {
    const m = new ByNamespace<number>();
    assert.equal(m.set('a', 'x', 1), undefined);
    assert.equal(m.set('a', 'y', 2), undefined);
    assert.equal(m.set('', 'x', 3), undefined);
    assert.equal(m.set('a', 'x', 4), 1);
    assert.equal(m.size, 3);
    assert.equal(m.get('a', 'x'), 4);
    assert.equal(m.get('b', 'x'), undefined);
    assert.deepEqual([...m.namespace('a')!.keys()], ['x', 'y']);
    assert.deepEqual([...m.values()].sort(), [2, 3, 4]);
    assert.deepEqual(
      [...m.entries()],
      [
        ['a', 'x', 4],
        ['a', 'y', 2],
        ['', 'x', 3],
      ],
    );
    assert.equal(m.delete('a', 'x'), 4);
    assert.equal(m.delete('a', 'x'), undefined);
    assert.equal(m.delete('a', 'y'), 2);
    assert.equal(m.namespace('a'), undefined);
    assert.equal(m.size, 1);
  });

  it('deletes what another has no entry for, one at a time', () => {
    const m = new ByNamespace<number>();
    m.set('a', 'x', 1);
    m.set('a', 'y', 2);
    m.set('b', 'x', 3);
    const present = new ByNamespace<true>();
    present.set('a', 'y', true);
    const deleted: [number, number][] = [];
    m.deleteAbsentFrom(present, (v) => deleted.push([v, m.size]));
    assert.deepEqual(deleted, [
      [1, 2],
      [3, 1],
    ]);
    assert.deepEqual([...m.entries()], [['a', 'y', 2]]);
  });
});
