import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMatchCondition } from './cel.js';

test('request is kube SubjectAccessReviewSpec: fields are type-checked, selectors included', () => {
  const mc = compileMatchCondition(
    "has(request.resourceAttributes) && request.resourceAttributes.verb == 'get' && request.resourceAttributes.namespace == 'n' && request.groups.exists(g, g == 'dev')",
  );
  assert.equal(mc.evaluate({ resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'n' }, groups: ['dev'], user: 'u' }), true);
  assert.equal(mc.evaluate({ nonResourceAttributes: { path: '/healthz', verb: 'get' }, groups: ['dev'] }), false);
  const selectors = compileMatchCondition(
    "request.resourceAttributes.labelSelector.requirements.exists(r, r.key == 'app' && r.operator == 'In' && 'web' in r.values)",
  );
  assert.equal(
    selectors.evaluate({ resourceAttributes: { labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['web'] }] } } }),
    true,
  );
  assert.throws(
    () => compileMatchCondition('request.nosuch'),
    (err: Error) => err.message === "compilation failed: ERROR: <input>:1:8: undefined field 'nosuch'\n | request.nosuch\n | .......^",
  );
  assert.throws(() => compileMatchCondition('request.user == 1'), /found no matching overload for '_==_' applied to '\(string, int\)'/);
});
