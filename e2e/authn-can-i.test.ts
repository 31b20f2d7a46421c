// Issue 5, done-when 1 under enforcing authorization: one kapi with --authorization-mode=Node,RBAC
// and every authenticator (client certificates, --token-auth-file, bootstrap tokens, service
// account tokens, --oidc-* against a local HTTPS issuer, and an exec plugin in the kubeconfig).
// For each of the seven credential kinds, kubectl 1.33 `auth whoami -o json` reports the user
// kube-apiserver would, and `auth can-i --list -n <ns>` shows exactly the defaults every
// authenticated user has (system:basic-user, system:discovery, system:public-info-viewer) plus
// what RBAC grants that identity (by user name or by one of its groups), and nothing else.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKey, issueCert, loadKey } from '../server/pki/x509.js';
import { startOidcIssuer, type OidcIssuer } from './oidc-issuer.js';
import { kubectl, kubectlOk, startKapi, uniqueName, waitFor, writeKubeconfig, type KapiProcess } from './harness.js';

interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

const OIDC_CLIENT_ID = 'kapi-e2e-can-i';

/** what every authenticated user may do, as kubectl prints it (one row per rule, blanks squeezed) */
const AUTHENTICATED_DEFAULTS = [
  'selfsubjectreviews.authentication.k8s.io [] [] [create]',
  'selfsubjectaccessreviews.authorization.k8s.io [] [] [create]',
  'selfsubjectrulesreviews.authorization.k8s.io [] [] [create]',
  ...['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'].map(
    (u) => `[${u}] [] [get]`,
  ),
];

/** the issuer discovery documents, granted to the group system:serviceaccounts */
const SERVICE_ACCOUNT_DEFAULTS = [
  '/.well-known/openid-configuration',
  '/.well-known/openid-configuration/',
  '/openid/v1/jwks',
  '/openid/v1/jwks/',
].map((u) => `[${u}] [] [get]`);

/** the rows of `kubectl auth can-i --list` (header dropped, columns joined by one space, duplicates merged) */
function canIRows(out: string): string[] {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  assert.match(lines[0] ?? '', /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/);
  return [...new Set(lines.slice(1).map((l) => l.trim().replace(/\s+/g, ' ')))].sort();
}

const sorted = (rows: string[]): string[] => [...new Set(rows)].sort();

describe('authentication and RBAC together: whoami and can-i --list for every credential kind', () => {
  let dir: string;
  let kapi: KapiProcess;
  let issuer: OidcIssuer;
  const run = uniqueName('cani');
  const ns = {
    admin: `${run}-admin`,
    carol: `${run}-carol`,
    alice: `${run}-alice`,
    boot: `${run}-boot`,
    sa: `${run}-sa`,
    oidc: `${run}-oidc`,
    bob: `${run}-bob`,
  };
  const admin = () => ({ kubeconfig: kapi.kubeconfig });
  const apply = (doc: unknown) => kubectlOk(['apply', '-f', '-'], { ...admin(), input: JSON.stringify(doc) });
  const kubeconfig = (name: string, user: Record<string, unknown>) =>
    writeKubeconfig(path.join(dir, `${name}.kubeconfig`), kapi.kubeconfig, user);

  const whoami = async (kc: string): Promise<UserInfo> => {
    const r = await kubectl(['auth', 'whoami', '-o', 'json'], { kubeconfig: kc });
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { status: { userInfo: UserInfo } }).status.userInfo;
  };
  const canIList = async (kc: string, namespace: string): Promise<string[]> => {
    const r = await kubectl(['auth', 'can-i', '--list', '-n', namespace], { kubeconfig: kc });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /incomplete/);
    return canIRows(r.stdout);
  };
  /** waits until the grant is visible (RBAC is served from a watch cache), then asserts the exact rows */
  const expectRows = async (kc: string, namespace: string, expected: string[]): Promise<void> => {
    const want = sorted(expected);
    let got: string[] = [];
    await waitFor(
      `can-i --list in ${namespace} to settle`,
      async () => {
        got = await canIList(kc, namespace);
        return want.every((row) => got.includes(row));
      },
      30000,
      200,
    ).catch(() => undefined);
    assert.deepEqual(got, want);
  };

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authn-can-i-'));
    writeFileSync(path.join(dir, 'tokens.csv'), 'static-token-alice,alice,alice-uid,"devs,qa"\nstatic-token-bob,bob,bob-uid\n');
    issuer = await startOidcIssuer(dir, OIDC_CLIENT_ID);
    kapi = await startKapi({
      extraArgs: [
        '--authorization-mode=Node,RBAC',
        '--token-auth-file',
        path.join(dir, 'tokens.csv'),
        '--enable-bootstrap-token-auth',
        '--oidc-issuer-url',
        issuer.url,
        '--oidc-client-id',
        OIDC_CLIENT_ID,
        '--oidc-ca-file',
        issuer.caFile,
        '--oidc-username-prefix',
        'oidc:',
        '--oidc-groups-claim',
        'groups',
        '--oidc-groups-prefix',
        'oidc:',
      ],
    });
    for (const n of Object.values(ns)) await kubectlOk(['create', 'namespace', n], admin());
  });
  after(async () => {
    await kapi?.stop();
    await issuer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the admin certificate: kubernetes-admin in system:masters may do everything', async () => {
    const u = await whoami(kapi.kubeconfig);
    assert.equal(u.username, 'kubernetes-admin');
    assert.deepEqual(u.groups, ['system:masters', 'system:authenticated']);
    await expectRows(kapi.kubeconfig, ns.admin, [...AUTHENTICATED_DEFAULTS, '*.* [] [] [*]', '[*] [] [*]']);
  });

  it('a certificate with two O values: a RoleBinding of view to its second group', async () => {
    const ca = {
      certPem: readFileSync(path.join(kapi.dataDir, 'pki', 'ca.crt'), 'utf8'),
      key: await loadKey(readFileSync(path.join(kapi.dataDir, 'pki', 'ca.key'), 'utf8')),
    };
    const key = await generateKey('ecdsa');
    const cert = await issueCert(ca, { commonName: 'carol', organizations: ['team-a', 'team-b'], usage: 'client', validDays: 1 }, key);
    const kc = kubeconfig('carol', {
      'client-certificate-data': Buffer.from(cert).toString('base64'),
      'client-key-data': Buffer.from(key.privateKeyPem).toString('base64'),
    });
    const u = await whoami(kc);
    assert.equal(u.username, 'carol');
    assert.deepEqual(u.groups, ['team-a', 'team-b', 'system:authenticated']);

    await expectRows(kc, ns.carol, AUTHENTICATED_DEFAULTS);
    await kubectlOk(['create', 'rolebinding', 'team-b-view', '--clusterrole=view', '--group=team-b', '-n', ns.carol], admin());
    let rows: string[] = [];
    await waitFor(
      'view to reach team-b',
      async () => (rows = await canIList(kc, ns.carol)).includes('pods [] [] [get list watch]'),
      30000,
      200,
    );
    for (const row of AUTHENTICATED_DEFAULTS) assert.ok(rows.includes(row), `missing ${row}`);
    for (const row of ['deployments.apps [] [] [get list watch]', 'configmaps [] [] [get list watch]', 'pods/log [] [] [get list watch]']) {
      assert.ok(rows.includes(row), `missing ${row}`);
    }
    // view grants only reads, and never secrets
    for (const row of rows.filter((r) => !AUTHENTICATED_DEFAULTS.includes(r))) assert.match(row, / \[\] \[\] \[get list watch\]$/, row);
    assert.ok(!rows.some((r) => r.startsWith('secrets ')));
    // the binding is namespaced: elsewhere carol has the defaults only
    await expectRows(kc, ns.alice, AUTHENTICATED_DEFAULTS);
  });

  it('a static token: a Role bound to the user and a ClusterRole bound to one of its groups', async () => {
    const kc = kubeconfig('alice', { token: 'static-token-alice' });
    const u = await whoami(kc);
    assert.equal(u.username, 'alice');
    assert.equal(u.uid, 'alice-uid');
    assert.deepEqual(u.groups, ['devs', 'qa', 'system:authenticated']);

    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'alice-settings', namespace: ns.alice },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'], verbs: ['get'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list', 'watch'] },
      ],
    });
    await kubectlOk(['create', 'rolebinding', 'alice-settings', '--role=alice-settings', '--user=alice', '-n', ns.alice], admin());
    await kubectlOk(['create', 'clusterrole', `${run}-metrics`, '--verb=get', '--non-resource-url=/metrics'], admin());
    await kubectlOk(['create', 'clusterrolebinding', `${run}-devs-metrics`, `--clusterrole=${run}-metrics`, '--group=devs'], admin());
    await expectRows(kc, ns.alice, [
      ...AUTHENTICATED_DEFAULTS,
      'configmaps [] [settings] [get]',
      'deployments.apps [] [] [list watch]',
      '[/metrics] [] [get]',
    ]);
    // the cluster-wide grant follows alice into every namespace; the Role does not
    await expectRows(kc, ns.bob, [...AUTHENTICATED_DEFAULTS, '[/metrics] [] [get]']);
  });

  it('a bootstrap token: system:bootstrap:<id>, and system:node-bootstrapper bound to system:bootstrappers', async () => {
    await kubectlOk(
      [
        'create',
        'secret',
        'generic',
        'bootstrap-token-k7cani',
        '-n',
        'kube-system',
        '--type',
        'bootstrap.kubernetes.io/token',
        '--from-literal',
        'token-id=k7cani',
        '--from-literal',
        'token-secret=abcdefghij012345',
        '--from-literal',
        'usage-bootstrap-authentication=true',
        '--from-literal',
        'auth-extra-groups=system:bootstrappers:workers',
      ],
      admin(),
    );
    const kc = kubeconfig('bootstrap', { token: 'k7cani.abcdefghij012345' });
    const u = await waitFor('the bootstrap token to authenticate', async () => (await whoami(kc).catch(() => undefined)) ?? false);
    assert.equal(u.username, 'system:bootstrap:k7cani');
    assert.deepEqual(u.groups, ['system:bootstrappers', 'system:bootstrappers:workers', 'system:authenticated']);

    await expectRows(kc, ns.boot, AUTHENTICATED_DEFAULTS);
    await kubectlOk(
      [
        'create',
        'clusterrolebinding',
        `${run}-node-bootstrapper`,
        '--clusterrole=system:node-bootstrapper',
        '--group=system:bootstrappers',
      ],
      admin(),
    );
    await expectRows(kc, ns.boot, [
      ...AUTHENTICATED_DEFAULTS,
      'certificatesigningrequests.certificates.k8s.io [] [] [create get list watch]',
    ]);
    await kubectlOk(['delete', 'secret', 'bootstrap-token-k7cani', '-n', 'kube-system'], admin());
  });

  it('a service account token from kubectl create token: SA groups, issuer discovery, a Role bound to the account', async () => {
    await kubectlOk(['create', 'serviceaccount', 'robot', '-n', ns.sa], admin());
    const uid = (await kubectlOk(['get', 'serviceaccount', 'robot', '-n', ns.sa, '-o', 'jsonpath={.metadata.uid}'], admin())).trim();
    const token = (await kubectlOk(['create', 'token', 'robot', '-n', ns.sa], admin())).trim();
    const kc = kubeconfig('robot', { token });
    const u = await whoami(kc);
    assert.equal(u.username, `system:serviceaccount:${ns.sa}:robot`);
    assert.equal(u.uid, uid);
    assert.deepEqual(u.groups, ['system:serviceaccounts', `system:serviceaccounts:${ns.sa}`, 'system:authenticated']);
    assert.match(u.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '', /^JTI=/);

    await expectRows(kc, ns.sa, [...AUTHENTICATED_DEFAULTS, ...SERVICE_ACCOUNT_DEFAULTS]);
    await kubectlOk(['create', 'role', 'log-reader', '--verb=get', '--resource=pods/log', '-n', ns.sa], admin());
    await kubectlOk(['create', 'role', 'pod-lister', '--verb=list', '--resource=pods', '-n', ns.sa], admin());
    await kubectlOk(['create', 'rolebinding', 'robot-logs', '--role=log-reader', `--serviceaccount=${ns.sa}:robot`, '-n', ns.sa], admin());
    // a binding to the namespace's service account group reaches robot as well
    await kubectlOk(
      ['create', 'rolebinding', 'sa-pods', '--role=pod-lister', `--group=system:serviceaccounts:${ns.sa}`, '-n', ns.sa],
      admin(),
    );
    await expectRows(kc, ns.sa, [...AUTHENTICATED_DEFAULTS, ...SERVICE_ACCOUNT_DEFAULTS, 'pods/log [] [] [get]', 'pods [] [] [list]']);
    await expectRows(kc, ns.oidc, [...AUTHENTICATED_DEFAULTS, ...SERVICE_ACCOUNT_DEFAULTS]);
  });

  it('an OIDC ID token from a local issuer: prefixed user and groups, a RoleBinding to one group', async () => {
    const kc = kubeconfig('oidc', { token: await issuer.sign({ sub: 'dave', groups: ['admins', 'ops'] }) });
    const u = await waitFor('the OIDC issuer keys to be fetched', async () => (await whoami(kc).catch(() => undefined)) ?? false);
    assert.equal(u.username, 'oidc:dave');
    assert.deepEqual(u.groups, ['oidc:admins', 'oidc:ops', 'system:authenticated']);

    await expectRows(kc, ns.oidc, AUTHENTICATED_DEFAULTS);
    await kubectlOk(['create', 'clusterrole', `${run}-services`, '--verb=get,update', '--resource=services'], admin());
    await kubectlOk(['create', 'rolebinding', 'ops-services', `--clusterrole=${run}-services`, '--group=oidc:ops', '-n', ns.oidc], admin());
    // a binding to the unprefixed group name grants nothing
    await kubectlOk(['create', 'rolebinding', 'plain-admins', '--clusterrole=edit', '--group=admins', '-n', ns.oidc], admin());
    await expectRows(kc, ns.oidc, [...AUTHENTICATED_DEFAULTS, 'services [] [] [get update]']);
  });

  it('an exec credential plugin in the kubeconfig: a Role with a wildcard verb bound to its user', async () => {
    const plugin = path.join(dir, 'credential-plugin.sh');
    writeFileSync(
      plugin,
      '#!/bin/sh\n' +
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"static-token-bob"}}\'\n',
    );
    chmodSync(plugin, 0o755);
    const kc = kubeconfig('exec', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } });
    const u = await whoami(kc);
    assert.equal(u.username, 'bob');
    assert.equal(u.uid, 'bob-uid');
    assert.deepEqual(u.groups, ['system:authenticated']);

    await expectRows(kc, ns.bob, AUTHENTICATED_DEFAULTS);
    await kubectlOk(['create', 'role', 'leases', '--verb=*', '--resource=leases.coordination.k8s.io', '-n', ns.bob], admin());
    await kubectlOk(['create', 'rolebinding', 'bob-leases', '--role=leases', '--user=bob', '-n', ns.bob], admin());
    await expectRows(kc, ns.bob, [...AUTHENTICATED_DEFAULTS, 'leases.coordination.k8s.io [] [] [*]']);
    assert.equal(
      (await kubectl(['auth', 'can-i', 'delete', 'leases.coordination.k8s.io', '-n', ns.bob], { kubeconfig: kc })).stdout.trim(),
      'yes',
    );
    assert.equal(
      (await kubectl(['auth', 'can-i', 'delete', 'leases.coordination.k8s.io', '-n', ns.alice], { kubeconfig: kc })).stdout.trim(),
      'no',
    );
  });
});
