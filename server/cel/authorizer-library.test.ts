import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import {
  AuthorizationPending,
  AuthorizerSession,
  AuthorizerValue,
  evaluateWithAuthorizer,
  registerAuthorizerLibrary,
} from './authorizer-library.js';
import type { AccessReviewRequest } from '../machinery/access-review.js';

const env = registerAuthorizerLibrary(new Environment(), { declareVariable: true });

test('a check asks the authorizer once, between attempts, with the attributes built by the calls', async () => {
  const asked: AccessReviewRequest[] = [];
  const session = new AuthorizerSession({
    authorize: async (req) => {
      asked.push(req);
      return { allowed: req.resourceAttributes?.['verb'] === 'get', reason: 'rbac' };
    },
  });
  const authorizer = new AuthorizerValue(session, { username: 'bob', groups: ['devs'] });
  const p = env.parse(
    "authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('web').check('get').allowed()",
  );
  assert.ok((p.check() as { valid: boolean }).valid);
  assert.throws(() => p({ authorizer }), AuthorizationPending);
  let runs = 0;
  const result = await evaluateWithAuthorizer(
    session,
    () => {
      runs++;
      try {
        return p({ authorizer }) as boolean;
      } catch {
        return undefined;
      }
    },
    (r) => r === undefined,
  );
  assert.equal(result, true);
  assert.equal(runs, 2);
  assert.equal(asked.length, 1);
  assert.deepEqual(asked[0], {
    user: { username: 'bob', groups: ['devs'] },
    resourceAttributes: {
      verb: 'get',
      group: 'apps',
      version: '*',
      resource: 'deployments',
      subresource: 'scale',
      namespace: 'ns',
      name: 'web',
    },
  });
});

test('without an authorizer every check is allowed; non-resource paths and service accounts', () => {
  const authorizer = new AuthorizerValue(new AuthorizerSession(undefined), { username: 'x', groups: [] });
  assert.equal(env.evaluate("authorizer.path('/healthz').check('get').allowed()", { authorizer }), true);
  assert.equal(env.evaluate("authorizer.serviceAccount('kube-system', 'sa').path('/metrics').check('get').reason()", { authorizer }), '');
});

test('authorizer.requestResource checks the request own resource', async () => {
  const asked: AccessReviewRequest[] = [];
  const session = new AuthorizerSession({ authorize: async (req) => (asked.push(req), { allowed: true }) });
  const authorizer = new AuthorizerValue(
    session,
    { username: 'bob', groups: [] },
    { group: 'apps', resource: 'deployments', subresource: '', namespace: 'ns', name: 'web' },
  );
  const p = env.parse("authorizer.requestResource.check('delete').allowed()");
  const run = () => {
    try {
      return p({ authorizer }) as boolean;
    } catch {
      return undefined;
    }
  };
  assert.equal(await evaluateWithAuthorizer(session, run, (r) => r === undefined), true);
  assert.deepEqual(asked[0]?.resourceAttributes, {
    verb: 'delete',
    group: 'apps',
    version: '*',
    resource: 'deployments',
    namespace: 'ns',
    name: 'web',
  });
});

test('fieldSelector and labelSelector reach the authorizer as raw selectors', async () => {
  const asked: AccessReviewRequest[] = [];
  const session = new AuthorizerSession({
    authorize: async (req) => {
      asked.push(req);
      return { allowed: true };
    },
  });
  const authorizer = new AuthorizerValue(session, { username: 'u', groups: [] });
  const p = env.parse(
    'authorizer.group("").resource("pods").fieldSelector("spec.nodeName=n1").labelSelector("app=x").check("list").allowed()',
  );
  assert.equal(
    await evaluateWithAuthorizer(
      session,
      () => {
        try {
          return p({ authorizer });
        } catch (e) {
          if (e instanceof AuthorizationPending) return undefined;
          throw e;
        }
      },
      (r) => r === undefined,
    ),
    true,
  );
  assert.deepEqual(asked[0]!.resourceAttributes, {
    verb: 'list',
    group: '',
    version: '*',
    resource: 'pods',
    fieldSelector: { rawSelector: 'spec.nodeName=n1' },
    labelSelector: { rawSelector: 'app=x' },
  });
});
