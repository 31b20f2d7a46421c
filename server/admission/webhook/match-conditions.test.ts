import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuthorizerSession } from '../../cel/authorizer-library.js';
import { evaluateMatchConditions, type MatchInput } from './match-conditions.js';

const input = (object: unknown): MatchInput => ({
  object,
  oldObject: null,
  request: { operation: 'CREATE' },
  session: new AuthorizerSession(undefined),
  user: { username: 'u', groups: [] },
  requestResource: { group: '', resource: 'configmaps', subresource: '', namespace: 'd', name: 'c' },
});

test('match conditions: false skips, errors are reported, the shared cost budget runs out with kube message', async () => {
  assert.deepEqual(await evaluateMatchConditions([{ name: 'a', expression: 'object.n > 1' }], input({ n: 2 })), { matches: true });
  assert.deepEqual(await evaluateMatchConditions([{ name: 'a', expression: 'object.n > 5' }], input({ n: 2 })), {
    matches: false,
    failedCondition: 'a',
  });
  // each condition stays under the per-call limit; together they pass the 2500000 budget
  const heavy = { name: 'heavy', expression: 'object.xs.all(a, object.xs.all(b, a >= 0))' };
  const xs = Array.from({ length: 300 }, (_, i) => i);
  const conditions = Array.from({ length: 6 }, (_, i) => ({ ...heavy, name: `heavy${i}` }));
  assert.deepEqual(await evaluateMatchConditions(conditions.slice(0, 1), input({ xs })), { matches: true });
  assert.deepEqual(await evaluateMatchConditions(conditions, input({ xs })), {
    matches: false,
    error: 'validation failed due to running out of cost budget, no further validation rules will be run',
  });
});
