import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cachedTokenAuthenticator } from './token-cache.js';
import type { TokenAuthResult } from './token.js';

const API = ['https://kubernetes.default.svc.cluster.local'];

function counting(answer: (token: string) => TokenAuthResult | null | Error) {
  const calls: string[] = [];
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  return {
    calls,
    hold() {
      gate = new Promise<void>((r) => (release = r));
    },
    release: () => release?.(),
    method: async (token: string): Promise<TokenAuthResult | null> => {
      calls.push(token);
      await gate;
      const a = answer(token);
      if (a instanceof Error) throw a;
      return a;
    },
  };
}

const user = (name: string): TokenAuthResult => ({ user: { username: name, groups: [] }, audiences: API });

test('a token that authenticated is taken again until the TTL passes, then checked anew', async () => {
  let clock = 1_000;
  const inner = counting((t) => (t === 'good' ? user('alice') : null));
  const tokens = cachedTokenAuthenticator(inner.method, { successTtlMs: 10_000, now: () => clock });
  assert.equal((await tokens('good', API))?.user.username, 'alice');
  clock += 9_999;
  assert.equal((await tokens('good', API))?.user.username, 'alice');
  assert.deepEqual(inner.calls, ['good']);
  clock += 1;
  assert.equal((await tokens('good', API))?.user.username, 'alice');
  assert.deepEqual(inner.calls, ['good', 'good']);
});

test('rejections and errors are not cached', async () => {
  let broken = true;
  const inner = counting((t) => (t === 'flaky' && broken ? new Error('lookup failed') : t === 'flaky' ? user('bob') : null));
  const tokens = cachedTokenAuthenticator(inner.method, { successTtlMs: 10_000 });
  assert.equal(await tokens('unknown', API), null);
  assert.equal(await tokens('unknown', API), null);
  await assert.rejects(tokens('flaky', API), /lookup failed/);
  broken = false;
  assert.equal((await tokens('flaky', API))?.user.username, 'bob');
  assert.deepEqual(inner.calls, ['unknown', 'unknown', 'flaky', 'flaky']);
});

test('the same token for other audiences is checked on its own', async () => {
  const inner = counting(() => user('carol'));
  const tokens = cachedTokenAuthenticator(inner.method, { successTtlMs: 10_000 });
  await tokens('t', API);
  await tokens('t', ['vault']);
  // lists that would join to the same text are still apart
  await tokens('t', ['a', 'b']);
  await tokens('t', ['ab']);
  await tokens('t', [...API]);
  assert.equal(inner.calls.length, 4);
});

test('overlapping checks of one token share one lookup', async () => {
  const inner = counting(() => user('dave'));
  inner.hold();
  const tokens = cachedTokenAuthenticator(inner.method, { successTtlMs: 10_000 });
  const all = [tokens('t', API), tokens('t', API), tokens('t', API)];
  await new Promise((r) => setImmediate(r));
  inner.release();
  const results = await Promise.all(all);
  assert.deepEqual(
    results.map((r) => r?.user.username),
    ['dave', 'dave', 'dave'],
  );
  assert.equal(inner.calls.length, 1);
});

test('a TTL of 0 caches nothing', async () => {
  const inner = counting(() => user('erin'));
  const tokens = cachedTokenAuthenticator(inner.method, { successTtlMs: 0 });
  await tokens('t', API);
  await tokens('t', API);
  assert.equal(inner.calls.length, 2);
});

test('tokens that end alike are told apart', async () => {
  const inner = counting((t) => user(t.slice(0, 5)));
  const tokens = cachedTokenAuthenticator(inner.method, { successTtlMs: 10_000 });
  const tail = 'x'.repeat(100);
  assert.equal((await tokens(`alice${tail}`, API))?.user.username, 'alice');
  assert.equal((await tokens(`mallo${tail}`, API))?.user.username, 'mallo');
  assert.equal((await tokens(`alice${tail}`, API))?.user.username, 'alice');
  assert.equal(inner.calls.length, 3);
});

test('forget drops every answer', async () => {
  const inner = counting(() => user('frank'));
  const tokens = cachedTokenAuthenticator(inner.method, { successTtlMs: 10_000 });
  await tokens('t', API);
  tokens.forget();
  await tokens('t', API);
  assert.equal(inner.calls.length, 2);
});

test('a check that was under way when the cache forgot is not remembered', async () => {
  const inner = counting(() => user('gina'));
  inner.hold();
  const tokens = cachedTokenAuthenticator(inner.method, { successTtlMs: 10_000 });
  const first = tokens('t', API);
  await new Promise((r) => setImmediate(r));
  tokens.forget();
  inner.release();
  await first;
  await tokens('t', API);
  assert.equal(inner.calls.length, 2);
});
