// Impersonation through the real handler chain over TLS: each requested value is authorized
// with the impersonate verb on kube-apiserver's resource, repeated Impersonate-Group headers
// are separate groups, and SelfSubjectReview shows the impersonated user.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loadCatalog } from '../../apis/catalog.js';
import { MemoryResolver } from '../../endpoints/testing/memory-resource.js';
import { SelfSubjectReviewResource } from '../../registry/virtual/reviews.js';
import { createApiHandler } from '../api-handler.js';
import { createX509Authenticator } from '../../authn/x509.js';
import { unionAuthenticator, withAuthenticatedGroup } from '../../authn/authenticator.js';
import type { AuthorizationAttributes, Authorizer } from '../../authz/authorizer.js';
import { createSecureServer, type SecureServer } from '../server.js';
import { createTestPKI, type KeyPair, type TestPKI } from '../../pki/testing.js';
import { impersonatedUser, impersonationRequests } from './impersonation.js';

let pki: TestPKI;
let server: SecureServer;
let port: number;
let admin: KeyPair;
let bob: KeyPair;
const checks: AuthorizationAttributes[] = [];

/** masters may impersonate anything; bob only the user jane and the group devs */
const authorizer: Authorizer = {
  async authorize(attrs) {
    if (attrs.verb !== 'impersonate') return { decision: 'allow' };
    checks.push(attrs);
    if (attrs.user.groups.includes('system:masters')) return { decision: 'allow' };
    if (attrs.user.username === 'bob' && attrs.resource === 'users' && attrs.name === 'jane') return { decision: 'allow' };
    if (attrs.user.username === 'bob' && attrs.resource === 'groups' && attrs.name === 'devs') return { decision: 'allow' };
    return { decision: 'noOpinion' };
  },
};

function whoami(client: KeyPair, headers: Record<string, string | string[]>): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        ca: pki.ca.cert,
        cert: client.cert,
        key: client.key,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
  });
}

const userInfo = (body: Record<string, unknown>) => (body.status as { userInfo: Record<string, unknown> }).userInfo;

before(async () => {
  pki = createTestPKI();
  admin = pki.client('admin', ['system:masters']);
  bob = pki.client('bob');
  const info = loadCatalog().lookup('authentication.k8s.io', 'v1', 'selfsubjectreviews')!;
  const handler = createApiHandler({
    resolver: new MemoryResolver().add(new SelfSubjectReviewResource(info, () => new Date())),
    authenticator: withAuthenticatedGroup(unionAuthenticator([createX509Authenticator(pki.ca.cert)])),
    authorizer,
  });
  server = createSecureServer({ cert: pki.server.cert, key: pki.server.key, clientCA: pki.ca.cert, handler });
  port = ((await server.listen(0)) as AddressInfo).port;
});
after(async () => {
  await server?.close();
  pki?.cleanup();
});

describe('impersonation filter', () => {
  it('lists requests in kube order; a service account user is a ServiceAccount; extras are percent-decoded', () => {
    const headers = new Map([
      ['impersonate-user', ['system:serviceaccount:ns:robot']],
      ['impersonate-group', ['a', 'b']],
      ['impersonate-extra-scopes%2fx', ['s1', 's2']],
      ['impersonate-uid', ['u1']],
    ]);
    const list = impersonationRequests(headers);
    assert.deepEqual(list, [
      { kind: 'ServiceAccount', namespace: 'ns', name: 'robot' },
      { kind: 'Group', name: 'a' },
      { kind: 'Group', name: 'b' },
      { kind: 'UserExtra', name: 's1', extraKey: 'scopes/x' },
      { kind: 'UserExtra', name: 's2', extraKey: 'scopes/x' },
      { kind: 'UID', name: 'u1' },
    ]);
    assert.deepEqual(impersonatedUser(list, true), {
      username: 'system:serviceaccount:ns:robot',
      groups: ['a', 'b', 'system:authenticated'],
      uid: 'u1',
      extra: { 'scopes/x': ['s1', 's2'] },
    });
    // groups of a service account are implied when none are given
    assert.deepEqual(impersonatedUser([{ kind: 'ServiceAccount', namespace: 'ns', name: 'robot' }], false).groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:ns',
      'system:authenticated',
    ]);
    // the anonymous user is unauthenticated; an explicit system:unauthenticated suppresses authenticated
    assert.deepEqual(impersonatedUser([{ kind: 'User', name: 'system:anonymous' }], false).groups, ['system:unauthenticated']);
    assert.deepEqual(
      impersonatedUser(
        [
          { kind: 'User', name: 'x' },
          { kind: 'Group', name: 'system:unauthenticated' },
        ],
        true,
      ).groups,
      ['system:unauthenticated'],
    );
    assert.throws(
      () => impersonationRequests(new Map([['impersonate-group', ['a']]])),
      /requested \[\{Group {2}a {4}\}\] without impersonating a user/,
    );
  });

  it('masters impersonate a user with repeated groups, extras and a uid; each value is checked', async () => {
    checks.length = 0;
    const res = await whoami(admin, {
      'Impersonate-User': 'jane',
      'Impersonate-Group': ['g1', 'g2'],
      'Impersonate-Extra-Scopes': 'view',
      'Impersonate-Uid': 'jane-uid',
    });
    assert.equal(res.status, 201);
    assert.deepEqual(userInfo(res.body), {
      username: 'jane',
      uid: 'jane-uid',
      groups: ['g1', 'g2', 'system:authenticated'],
      extra: { scopes: ['view'] },
    });
    assert.deepEqual(
      checks.map((c) => [c.apiGroup, c.resource, c.subresource, c.name]),
      [
        ['', 'users', '', 'jane'],
        ['', 'groups', '', 'g1'],
        ['', 'groups', '', 'g2'],
        ['authentication.k8s.io', 'userextras', 'scopes', 'view'],
        ['authentication.k8s.io', 'uids', '', 'jane-uid'],
      ],
    );
  });

  it('a service account is impersonated on serviceaccounts in its namespace', async () => {
    checks.length = 0;
    const res = await whoami(admin, { 'Impersonate-User': 'system:serviceaccount:team:builder' });
    assert.equal(res.status, 201);
    assert.equal(userInfo(res.body).username, 'system:serviceaccount:team:builder');
    assert.deepEqual([checks[0]!.resource, checks[0]!.namespace, checks[0]!.name], ['serviceaccounts', 'team', 'builder']);
  });

  it("403 with kube-apiserver's message when one value is not allowed; resource names matter", async () => {
    assert.equal(userInfo((await whoami(bob, { 'Impersonate-User': 'jane', 'Impersonate-Group': 'devs' })).body).username, 'jane');
    const joe = await whoami(bob, { 'Impersonate-User': 'joe' });
    assert.equal(joe.status, 403);
    assert.equal(
      joe.body.message,
      'users "joe" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const group = await whoami(bob, { 'Impersonate-User': 'jane', 'Impersonate-Group': 'admins' });
    assert.equal(group.status, 403);
    assert.equal(
      group.body.message,
      'groups "admins" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    const extra = await whoami(bob, { 'Impersonate-User': 'jane', 'Impersonate-Extra-Scopes': 'x' });
    assert.equal(
      extra.body.message,
      'userextras.authentication.k8s.io "x" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
    );
  });

  it('groups without a user are an internal error, as in kube-apiserver', async () => {
    const res = await whoami(admin, { 'Impersonate-Group': 'g1' });
    assert.equal(res.status, 500);
    assert.match(String(res.body.message), /without impersonating a user/);
  });
});
