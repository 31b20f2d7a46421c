// The default policy reconciliation over real etcd and the registry: creates everything once,
// adds back what was taken away, leaves objects annotated autoupdate "false" alone, and two
// replicas reconciling at once both succeed.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../controllers/testing/harness.js';
import { internalContext } from '../controllers/util.js';
import { ensureSystemNamespaces } from '../controllers/bootstrap.js';
import { reconcileDefaultPolicy } from './reconcile.js';
import { defaultPolicy } from './bootstrap-policy.js';

describe('default RBAC policy reconciliation', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await ensureSystemNamespaces(h.main.deps());
  });
  after(async () => {
    await h?.close();
  });

  it('two replicas at once create every default object once', async () => {
    const other = h.replica();
    const [a, b] = await Promise.all([reconcileDefaultPolicy(h.main.registry), reconcileDefaultPolicy(other.registry)]);
    const policy = defaultPolicy();
    const total = policy.clusterRoles.length + policy.clusterRoleBindings.length + policy.roles.length + policy.roleBindings.length;
    assert.equal(new Set([...a.created, ...b.created]).size, total);
    const again = await reconcileDefaultPolicy(h.main.registry);
    assert.deepEqual(again, { created: [], updated: [] });
  });

  it('puts back a removed rule and subject, keeps additions', async () => {
    const ctx = internalContext('test', '');
    const roles = h.main.rest('rbac.authorization.k8s.io', 'v1', 'clusterroles');
    const bindings = h.main.rest('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings');
    await roles.update(
      ctx,
      'system:basic-user',
      (cur) => ({ ...cur!, rules: [{ apiGroups: ['x.io'], resources: ['things'], verbs: ['get'] }] }),
      { allowCreate: false },
    );
    await bindings.update(
      ctx,
      'system:public-info-viewer',
      (cur) => ({ ...cur!, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'someone' }] }),
      { allowCreate: false },
    );
    const r = await reconcileDefaultPolicy(h.main.registry);
    assert.deepEqual(r.updated.sort(), ['clusterrole/system:basic-user', 'clusterrolebinding/system:public-info-viewer']);
    const role = await roles.get(ctx, 'system:basic-user', {});
    assert.deepEqual(role.rules, [
      { apiGroups: ['x.io'], resources: ['things'], verbs: ['get'] },
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'] },
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectrulesreviews'] },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ]);
    const b = await bindings.get(ctx, 'system:public-info-viewer', {});
    assert.deepEqual(
      (b.subjects as { name: string }[]).map((s) => s.name),
      ['someone', 'system:authenticated', 'system:unauthenticated'],
    );
  });

  it('leaves objects annotated autoupdate "false" alone', async () => {
    const ctx = internalContext('test', '');
    const roles = h.main.rest('rbac.authorization.k8s.io', 'v1', 'clusterroles');
    await roles.update(
      ctx,
      'system:discovery',
      (cur) => ({
        ...cur!,
        metadata: { ...cur!.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } },
        rules: [{ nonResourceURLs: ['/version'], verbs: ['get'] }],
      }),
      { allowCreate: false },
    );
    const r = await reconcileDefaultPolicy(h.main.registry);
    assert.deepEqual(r, { created: [], updated: [] });
    assert.deepEqual((await roles.get(ctx, 'system:discovery', {})).rules, [{ nonResourceURLs: ['/version'], verbs: ['get'] }]);
  });
});
