// buildAuthorization without a server: modes in order, the union's decisions, reviews and
// rules reviews, and the reload rules of the configuration file.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildAuthorization, AuthorizationSetupError } from './index.js';

const flags = (o: Record<string, unknown>) => new Map(Object.entries(o)) as Map<string, never>;
const user = { username: 'u', groups: ['system:authenticated'] };
const attrs = {
  user,
  verb: 'get',
  isResourceRequest: true,
  path: '',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'n',
  name: '',
};

describe('buildAuthorization', () => {
  it('AlwaysAllow, AlwaysDeny in order; system:masters comes first', async () => {
    const allow = buildAuthorization({
      values: flags({ 'authorization-mode': ['AlwaysAllow', 'AlwaysDeny'] }),
      explicitlySet: new Set(),
      resolvePath: (p) => p,
    });
    assert.equal((await allow.authorizer.authorize(attrs)).decision, 'allow');
    const deny = buildAuthorization({
      values: flags({ 'authorization-mode': ['AlwaysDeny'] }),
      explicitlySet: new Set(),
      resolvePath: (p) => p,
    });
    assert.deepEqual(await deny.authorizer.authorize(attrs), { decision: 'noOpinion', reason: 'Everything is forbidden.' });
    assert.equal((await deny.authorizer.authorize({ ...attrs, user: { username: 'root', groups: ['system:masters'] } })).decision, 'allow');
    assert.deepEqual(await deny.reviews.authorize({ user, resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'n' } }), {
      allowed: false,
      reason: 'Everything is forbidden.',
    });
    const rules = await allow.rules.rulesFor(user, 'n');
    assert.equal(rules.incomplete, false);
    assert.deepEqual(rules.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  });

  it('bad mode flags end start-up', () => {
    assert.throws(
      () =>
        buildAuthorization({ values: flags({ 'authorization-mode': ['RBAC', 'Nope'] }), explicitlySet: new Set(), resolvePath: (p) => p }),
      AuthorizationSetupError,
    );
  });

  it('a configuration file: webhooks make rules reviews incomplete; only webhooks may change on reload', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authz-index-'));
    try {
      const kc = path.join(dir, 'hook.kubeconfig');
      writeFileSync(
        kc,
        JSON.stringify({
          clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
          users: [{ name: 'u', user: {} }],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
          'current-context': 'x',
        }),
      );
      const file = path.join(dir, 'authz.yaml');
      const webhook = (name: string) => ({
        type: 'Webhook',
        name,
        webhook: {
          timeout: '1s',
          subjectAccessReviewVersion: 'v1',
          failurePolicy: 'NoOpinion',
          connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kc },
        },
      });
      const write = (authorizers: unknown[]) =>
        writeFileSync(file, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthorizationConfiguration', authorizers }));
      write([webhook('one'), { type: 'RBAC', name: 'rbac' }]);
      const a = buildAuthorization({
        values: flags({ 'authorization-mode': ['AlwaysAllow'], 'authorization-config': file }),
        explicitlySet: new Set(),
        resolvePath: (p) => p,
      });
      assert.deepEqual(a.describe, ['Webhook/one', 'RBAC/rbac']);
      write([webhook('two'), { type: 'RBAC', name: 'rbac' }]);
      assert.equal(a.reloadConfig(), true);
      assert.deepEqual(a.describe, ['Webhook/two', 'RBAC/rbac']);
      write([webhook('two'), { type: 'RBAC', name: 'rbac' }, { type: 'Node', name: 'node' }]);
      assert.equal(a.reloadConfig(), false);
      write([{ type: 'RBAC', name: 'rbac', extra: true }]);
      assert.equal(a.reloadConfig(), false);
      assert.deepEqual(a.describe, ['Webhook/two', 'RBAC/rbac']);
      a.close();
      write([{ type: 'Webhook', name: 'in-cluster', webhook: { ...webhook('x').webhook, connectionInfo: { type: 'InClusterConfig' } } }]);
      assert.throws(
        () => buildAuthorization({ values: flags({ 'authorization-config': file }), explicitlySet: new Set(), resolvePath: (p) => p }),
        /InClusterConfig/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the webhook failure policy NoOpinion falls through to the next authorizer', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authz-index-'));
    try {
      const kc = path.join(dir, 'hook.kubeconfig');
      // nothing listens on port 1: every call fails
      writeFileSync(
        kc,
        JSON.stringify({
          clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:1' } }],
          users: [{ name: 'u', user: {} }],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
          'current-context': 'x',
        }),
      );
      const file = path.join(dir, 'authz.yaml');
      const conf = (policy: string) =>
        writeFileSync(
          file,
          JSON.stringify({
            apiVersion: 'apiserver.config.k8s.io/v1',
            kind: 'AuthorizationConfiguration',
            authorizers: [
              {
                type: 'Webhook',
                name: 'down',
                webhook: {
                  timeout: '1s',
                  subjectAccessReviewVersion: 'v1',
                  failurePolicy: policy,
                  connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kc },
                },
              },
            ],
          }),
        );
      conf('NoOpinion');
      const a = buildAuthorization({ values: flags({ 'authorization-config': file }), explicitlySet: new Set(), resolvePath: (p) => p });
      assert.equal((await a.authorizer.authorize(attrs)).decision, 'noOpinion');
      const rules = await a.rules.rulesFor(user, 'n');
      assert.equal(rules.incomplete, true);
      assert.equal(rules.evaluationError, 'webhook authorizer does not support user rule resolution');
      a.close();
      conf('Deny');
      const b = buildAuthorization({ values: flags({ 'authorization-config': file }), explicitlySet: new Set(), resolvePath: (p) => p });
      assert.equal((await b.authorizer.authorize(attrs)).decision, 'deny');
      b.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
