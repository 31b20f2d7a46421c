import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EncodedItemCache } from './item-cache.js';

const bytesOf = (n: number, fill = 1) => new Uint8Array(n).fill(fill);

describe('encoded item cache', () => {
  it('makes an item once per stored version and form', () => {
    const cache = new EncodedItemCache(1 << 20);
    let made = 0;
    const make = () => {
      made++;
      return bytesOf(100, made);
    };
    const v1 = { key: '/pods/default/a', modRevision: 5 };
    const first = cache.get(v1, 'v1/PodList', make);
    assert.equal(cache.get({ ...v1 }, 'v1/PodList', make), first);
    assert.equal(made, 1);
    // a new version of the key, and another form of the same version, are made again
    const changed = cache.get({ key: v1.key, modRevision: 9 }, 'v1/PodList', make);
    assert.notEqual(changed, first);
    assert.equal(changed[0], 2);
    cache.get({ key: v1.key, modRevision: 9 }, 'v2/PodList', make);
    assert.equal(made, 3);
    assert.deepEqual({ hits: cache.stats.hits, misses: cache.stats.misses, items: cache.stats.items }, { hits: 1, misses: 3, items: 2 });
  });

  it('stays within its budget, letting the least recently used go first', () => {
    const cache = new EncodedItemCache(1000);
    const version = (name: string) => ({ key: `/c/${name}`, modRevision: 1 });
    for (const name of ['a', 'b', 'c']) cache.get(version(name), 'f', () => bytesOf(200));
    // a is used again: b is now the oldest
    cache.get(version('a'), 'f', () => assert.fail('a is kept'));
    cache.get(version('d'), 'f', () => bytesOf(200));
    assert.ok(cache.stats.bytes <= 1000, `${cache.stats.bytes} bytes kept`);
    let remade = '';
    for (const name of ['a', 'b', 'c', 'd']) cache.get(version(name), 'f', () => ((remade += name), bytesOf(200)));
    assert.ok(remade.startsWith('b'), `remade: ${remade}`);
    assert.ok(!remade.includes('a'), `remade: ${remade}`);
  });

  it('keeps nothing larger than its budget, and nothing at all with a budget of 0', () => {
    const cache = new EncodedItemCache(500);
    assert.equal(cache.get({ key: '/k', modRevision: 1 }, 'f', () => bytesOf(600)).length, 600);
    assert.equal(cache.stats.items, 0);
    const none = new EncodedItemCache(0);
    let made = 0;
    for (let i = 0; i < 3; i++) none.get({ key: '/k', modRevision: 1 }, 'f', () => (made++, bytesOf(1)));
    assert.equal(made, 3);
    assert.equal(none.stats.bytes, 0);
  });
});
