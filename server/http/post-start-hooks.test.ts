import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostStartHooks } from './post-start-hooks.js';

const settle = () => new Promise((r) => setImmediate(r));

test('a hook fails its check until its work is done, and names itself poststarthook/<name>', async () => {
  const hooks = new PostStartHooks();
  let finish!: () => void;
  const check = hooks.add('rbac/bootstrap-roles', new Promise<void>((r) => (finish = r)));
  assert.equal(check.name, 'poststarthook/rbac/bootstrap-roles');
  await assert.rejects(check.check(), /not finished/);
  finish();
  await settle();
  await check.check();
});

test('a hook whose work failed keeps failing with the reason; names are unique', async () => {
  const hooks = new PostStartHooks();
  hooks.add('a', Promise.reject(new Error('etcd went away')));
  await settle();
  await assert.rejects(hooks.check('a').check(), /failed: etcd went away/);
  assert.throws(() => hooks.add('a', Promise.resolve()), /registered twice/);
  assert.deepEqual(
    hooks.checks().map((c) => c.name),
    ['poststarthook/a'],
  );
});
