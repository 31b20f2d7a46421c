import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workerRoleEnv, workerRoleFromEnv } from './role.js';

test('a worker reads back the role its primary gave it; other processes have none', () => {
  assert.deepEqual(workerRoleFromEnv(workerRoleEnv({ index: 1, count: 4, embeddedEtcdEndpoints: ['http://127.0.0.1:2379'] })), {
    index: 1,
    count: 4,
    embeddedEtcdEndpoints: ['http://127.0.0.1:2379'],
  });
  assert.deepEqual(workerRoleFromEnv(workerRoleEnv({ index: 0, count: 2 })), { index: 0, count: 2, embeddedEtcdEndpoints: undefined });
  assert.equal(workerRoleFromEnv({}), undefined);
});
