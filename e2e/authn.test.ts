// Issue 5, authentication and impersonation, with kubectl 1.33 against a real kapi:
// `kubectl auth whoami` for every kind of credential (admin certificate, a certificate with two
// O groups, a static token, a bootstrap token, a service account token from `kubectl create
// token`, an OIDC ID token from a local HTTPS issuer, an exec credential plugin), 401 for a bad
// token, `--as`/`--as-group` for the admin, tokens of a deleted service account failing,
// TokenReview, the service account issuer discovery documents, and (once RBAC enforces) 403
// for callers who may not impersonate.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { generateKey, issueCert, loadKey } from '../server/pki/x509.js';
import { startOidcIssuer, type OidcIssuer } from './oidc-issuer.js';
import { kubectl, kubectlOk, startKapi, uniqueName, waitFor, writeKubeconfig, type KapiProcess } from './harness.js';

interface Whoami {
  status: { userInfo: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } };
}

const OIDC_CLIENT_ID = 'kapi-e2e';

describe('authentication: kubectl auth whoami for every credential kind', () => {
  let dir: string;
  let kapi: KapiProcess;
  let issuer: OidcIssuer;
  const ns = uniqueName('authn');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });
  const kubeconfig = (name: string, user: Record<string, unknown>) =>
    writeKubeconfig(path.join(dir, `${name}.kubeconfig`), kapi.kubeconfig, user);
  const whoami = async (kc: string, ...extra: string[]): Promise<Whoami['status']['userInfo']> =>
    (JSON.parse(await kubectlOk(['auth', 'whoami', '-o', 'json', ...extra], { kubeconfig: kc })) as Whoami).status.userInfo;
  const withToken = (name: string, token: string) => kubeconfig(name, { token });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authn-'));
    writeFileSync(path.join(dir, 'tokens.csv'), 'static-token-alice,alice,alice-uid,"devs,qa"\nstatic-token-bob,bob,bob-uid\n');
    issuer = await startOidcIssuer(dir, OIDC_CLIENT_ID);
    kapi = await startKapi({
      extraArgs: [
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
    await kubectlOk(['create', 'namespace', ns], admin());
  });
  after(async () => {
    await kapi?.stop();
    await issuer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the admin certificate is kubernetes-admin in system:masters', async () => {
    const u = await whoami(kapi.kubeconfig);
    assert.equal(u.username, 'kubernetes-admin');
    assert.deepEqual(u.groups, ['system:masters', 'system:authenticated']);
  });

  it("a certificate from the data dir's CA with two O values gives two groups", async () => {
    const caCertPem = readFileSync(path.join(kapi.dataDir, 'pki', 'ca.crt'), 'utf8');
    const ca = { certPem: caCertPem, key: await loadKey(readFileSync(path.join(kapi.dataDir, 'pki', 'ca.key'), 'utf8')) };
    const key = await generateKey('ecdsa');
    const cert = await issueCert(ca, { commonName: 'carol', organizations: ['team-a', 'team-b'], usage: 'client', validDays: 1 }, key);
    const kc = kubeconfig('carol', {
      'client-certificate-data': Buffer.from(cert).toString('base64'),
      'client-key-data': Buffer.from(key.privateKeyPem).toString('base64'),
    });
    const u = await whoami(kc);
    assert.equal(u.username, 'carol');
    assert.deepEqual(u.groups, ['team-a', 'team-b', 'system:authenticated']);
  });

  it('a static token from --token-auth-file is its user with uid and quoted groups', async () => {
    const u = await whoami(withToken('alice', 'static-token-alice'));
    assert.equal(u.username, 'alice');
    assert.equal(u.uid, 'alice-uid');
    assert.deepEqual(u.groups, ['devs', 'qa', 'system:authenticated']);
  });

  it('a bad token is 401 (anonymous is never a fall-back for a rejected credential)', async () => {
    const r = await kubectl(['auth', 'whoami'], { kubeconfig: withToken('bad', 'no-such-token') });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Unauthorized/);
    const raw = await kubectl(['get', '--raw', '/livez'], { kubeconfig: withToken('bad2', 'no-such-token') });
    assert.notEqual(raw.code, 0);
    assert.match(raw.stderr, /Unauthorized/);
  });

  it("a token after two spaces is no credential, and kubectl is told so (kube's Warning)", async () => {
    // client-go writes `Bearer <token>`: a token starting with a space makes `Bearer  x`
    const r = await kubectl(['get', '--raw', '/livez'], { kubeconfig: withToken('spaced', ' static-token-alice') });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /the provided Authorization header contains extra space before the bearer token, and is ignored/);
    const who = await kubectl(['auth', 'whoami'], { kubeconfig: withToken('spaced2', ' static-token-alice') });
    assert.notEqual(who.code, 0);
    assert.match(who.stderr, /extra space before the bearer token/);
  });

  it('a bootstrap token authenticates as system:bootstrap:<id> with its extra groups', async () => {
    await kubectlOk(
      [
        'create',
        'secret',
        'generic',
        'bootstrap-token-abcdef',
        '-n',
        'kube-system',
        '--type',
        'bootstrap.kubernetes.io/token',
        '--from-literal',
        'token-id=abcdef',
        '--from-literal',
        'token-secret=0123456789abcdef',
        '--from-literal',
        'usage-bootstrap-authentication=true',
        '--from-literal',
        'auth-extra-groups=system:bootstrappers:workers',
      ],
      admin(),
    );
    const kc = withToken('bootstrap', 'abcdef.0123456789abcdef');
    const u = await waitFor('the bootstrap token to authenticate', async () => (await whoami(kc).catch(() => undefined)) ?? false);
    assert.equal(u.username, 'system:bootstrap:abcdef');
    assert.deepEqual(u.groups, ['system:bootstrappers', 'system:bootstrappers:workers', 'system:authenticated']);
    // an expired token is no token
    await kubectlOk(['delete', 'secret', 'bootstrap-token-abcdef', '-n', 'kube-system'], admin());
    await kubectlOk(
      [
        'create',
        'secret',
        'generic',
        'bootstrap-token-abcdef',
        '-n',
        'kube-system',
        '--type',
        'bootstrap.kubernetes.io/token',
        '--from-literal',
        'token-id=abcdef',
        '--from-literal',
        'token-secret=0123456789abcdef',
        '--from-literal',
        'usage-bootstrap-authentication=true',
        '--from-literal',
        'expiration=2020-01-01T00:00:00Z',
      ],
      admin(),
    );
    await waitFor('the expired bootstrap token to fail', async () => (await kubectl(['auth', 'whoami'], { kubeconfig: kc })).code !== 0);
  });

  it('a service account token from kubectl create token; deleting the account makes it fail', async () => {
    await kubectlOk(['create', 'serviceaccount', 'robot', '-n', ns], admin());
    const uid = (await kubectlOk(['get', 'serviceaccount', 'robot', '-n', ns, '-o', 'jsonpath={.metadata.uid}'], admin())).trim();
    const token = (await kubectlOk(['create', 'token', 'robot', '-n', ns, '--duration', '15m'], admin())).trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
    assert.equal((claims.exp as number) - (claims.iat as number), 900);
    const kc = withToken('robot', token);
    const u = await whoami(kc);
    assert.equal(u.username, `system:serviceaccount:${ns}:robot`);
    assert.equal(u.uid, uid);
    assert.deepEqual(u.groups, ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']);
    assert.match(u.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '', /^JTI=/);

    // TokenReview sees the same user
    const review = JSON.parse(
      await kubectlOk(['create', '-o', 'json', '-f', '-'], {
        ...admin(),
        input: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
      }),
    ) as { status: { authenticated?: boolean; user?: { username?: string }; audiences?: string[] } };
    assert.equal(review.status.authenticated, true);
    assert.equal(review.status.user?.username, `system:serviceaccount:${ns}:robot`);
    assert.deepEqual(review.status.audiences, ['https://kubernetes.default.svc.cluster.local']);

    // a token for another audience is not valid for the API
    const other = (await kubectlOk(['create', 'token', 'robot', '-n', ns, '--audience', 'vault'], admin())).trim();
    const r = await kubectl(['auth', 'whoami'], { kubeconfig: withToken('robot-vault', other) });
    assert.match(r.stderr, /Unauthorized/);

    await kubectlOk(['delete', 'serviceaccount', 'robot', '-n', ns], admin());
    await waitFor("the deleted account's token to fail", async () => {
      const res = await kubectl(['auth', 'whoami'], { kubeconfig: kc });
      return res.code !== 0 && /Unauthorized/.test(res.stderr);
    });
    // a new account of the same name has another uid: the old token stays dead
    await kubectlOk(['create', 'serviceaccount', 'robot', '-n', ns], admin());
    const again = await kubectl(['auth', 'whoami'], { kubeconfig: kc });
    assert.match(again.stderr, /Unauthorized/);
  });

  it('an OIDC ID token from a local issuer (--oidc-*: prefixes, groups claim)', async () => {
    const token = await issuer.sign({ sub: 'dave', groups: ['admins', 'ops'] });
    const kc = withToken('oidc', token);
    const u = await waitFor('the OIDC issuer keys to be fetched', async () => (await whoami(kc).catch(() => undefined)) ?? false);
    assert.equal(u.username, 'oidc:dave');
    assert.deepEqual(u.groups, ['oidc:admins', 'oidc:ops', 'system:authenticated']);
    const wrongAudience = await new SignJWT({ sub: 'dave' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(issuer.url)
      .setAudience('other')
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode('a-secret-that-is-long-enough-for-hs256'));
    const r = await kubectl(['auth', 'whoami'], { kubeconfig: withToken('oidc-bad', wrongAudience) });
    assert.match(r.stderr, /Unauthorized/);
  });

  it('an exec credential plugin in the kubeconfig', async () => {
    const plugin = path.join(dir, 'credential-plugin.sh');
    writeFileSync(
      plugin,
      '#!/bin/sh\n' +
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"static-token-bob"}}\'\n',
    );
    chmodSync(plugin, 0o755);
    const kc = kubeconfig('exec', {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' },
    });
    const u = await whoami(kc);
    assert.equal(u.username, 'bob');
    assert.equal(u.uid, 'bob-uid');
    assert.deepEqual(u.groups, ['system:authenticated']);
  });

  it('kubectl --as / --as-group for the admin (system:masters may impersonate)', async () => {
    const u = await whoami(kapi.kubeconfig, '--as', 'jane', '--as-group', 'g1', '--as-group', 'g2');
    assert.equal(u.username, 'jane');
    assert.deepEqual(u.groups, ['g1', 'g2', 'system:authenticated']);
    const sa = await whoami(kapi.kubeconfig, '--as', `system:serviceaccount:${ns}:builder`);
    assert.equal(sa.username, `system:serviceaccount:${ns}:builder`);
    assert.deepEqual(sa.groups, ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']);
    const withUid = await whoami(kapi.kubeconfig, '--as', 'jane', '--as-uid', 'jane-uid');
    assert.equal(withUid.uid, 'jane-uid');
    // groups without a user are refused
    const r = await kubectl(['auth', 'whoami', '--as-group', 'g1'], admin());
    assert.notEqual(r.code, 0);
  });

  it('serves the service account issuer discovery documents', async () => {
    const config = JSON.parse(await kubectlOk(['get', '--raw', '/.well-known/openid-configuration'], admin())) as Record<string, unknown>;
    assert.equal(config.issuer, 'https://kubernetes.default.svc.cluster.local');
    assert.equal(config.jwks_uri, `https://127.0.0.1:${kapi.port}/openid/v1/jwks`);
    assert.deepEqual(config.response_types_supported, ['id_token']);
    const jwks = JSON.parse(await kubectlOk(['get', '--raw', '/openid/v1/jwks'], admin())) as { keys: Record<string, unknown>[] };
    assert.ok(jwks.keys.length >= 1);
    assert.equal(jwks.keys[0]!.use, 'sig');
    assert.equal(jwks.keys[0]!.alg, 'RS256');
  });
});

describe('impersonation needs the impersonate verb (RBAC)', () => {
  let dir: string;
  let kapi: KapiProcess;
  const kc = () => path.join(dir, 'bob.kubeconfig');

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-impersonate-'));
    writeFileSync(path.join(dir, 'tokens.csv'), 'static-token-bob,bob,bob-uid\n');
    kapi = await startKapi({ extraArgs: ['--token-auth-file', path.join(dir, 'tokens.csv'), '--authorization-mode', 'Node,RBAC'] });
    writeKubeconfig(kc(), kapi.kubeconfig, { token: 'static-token-bob' });
  });
  after(async () => {
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a caller without impersonate gets 403; resourceNames limit who may be impersonated', async () => {
    const probe = await kubectl(['get', 'namespaces'], { kubeconfig: kc() });
    assert.match(probe.stderr, /forbidden/i, 'RBAC is enforced for bob');
    // (`kubectl auth whoami` hides a 403 behind "the selfsubjectreviews API is not enabled ...",
    // so the denials are shown through a plain get)
    const denied = await kubectl(['get', 'namespaces', '--as', 'jane'], { kubeconfig: kc() });
    assert.notEqual(denied.code, 0);
    assert.match(
      denied.stderr,
      /users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
    await kubectlOk(
      ['create', 'clusterrole', 'impersonate-jane', '--verb', 'impersonate', '--resource', 'users', '--resource-name', 'jane'],
      { kubeconfig: kapi.kubeconfig },
    );
    await kubectlOk(['create', 'clusterrolebinding', 'bob-impersonates-jane', '--clusterrole', 'impersonate-jane', '--user', 'bob'], {
      kubeconfig: kapi.kubeconfig,
    });
    const u = await waitFor('bob to be allowed to impersonate jane', async () => {
      const r = await kubectl(['auth', 'whoami', '--as', 'jane', '-o', 'json'], { kubeconfig: kc() });
      return r.code === 0 ? (JSON.parse(r.stdout) as Whoami).status.userInfo : false;
    });
    assert.equal(u.username, 'jane');
    const joe = await kubectl(['get', 'namespaces', '--as', 'joe'], { kubeconfig: kc() });
    assert.match(joe.stderr, /users "joe" is forbidden: User "bob" cannot impersonate resource "users"/);
    const group = await kubectl(['get', 'namespaces', '--as', 'jane', '--as-group', 'admins'], { kubeconfig: kc() });
    assert.match(group.stderr, /groups "admins" is forbidden: User "bob" cannot impersonate resource "groups"/);
  });
});

describe('--authentication-config: CEL claim mappings and anonymous conditions; start-up exclusions', () => {
  let dir: string;
  let kapi: KapiProcess;
  let issuer: OidcIssuer;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authn-config-'));
    issuer = await startOidcIssuer(dir, OIDC_CLIENT_ID);
    const ca = readFileSync(issuer.caFile, 'utf8');
    const config = {
      apiVersion: 'apiserver.config.k8s.io/v1beta1',
      kind: 'AuthenticationConfiguration',
      jwt: [
        {
          issuer: { url: issuer.url, audiences: [OIDC_CLIENT_ID], certificateAuthority: ca },
          claimValidationRules: [{ expression: 'claims.sub != "mallory"', message: 'mallory is not welcome' }],
          claimMappings: {
            username: { expression: '"cel:" + claims.sub' },
            groups: { expression: 'claims.roles.map(r, "role:" + r)' },
            extra: [{ key: 'example.com/team', valueExpression: 'claims.?team.orValue("")' }],
          },
          userValidationRules: [{ expression: '!user.username.startsWith("cel:system:")', message: 'no system users' }],
        },
      ],
      anonymous: { enabled: true, conditions: [{ path: '/livez' }] },
    };
    writeFileSync(path.join(dir, 'authn.json'), JSON.stringify(config));
    kapi = await startKapi({ extraArgs: ['--authentication-config', path.join(dir, 'authn.json'), '--authorization-mode', 'RBAC'] });
  });
  after(async () => {
    await kapi?.stop();
    await issuer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('maps an ID token with CEL; validation rules reject with 401', async () => {
    const kc = writeKubeconfig(path.join(dir, 'cel.kubeconfig'), kapi.kubeconfig, {
      token: await issuer.sign({ sub: 'erin', roles: ['dev'], team: 'blue' }),
    });
    const u = await waitFor('the issuer keys to be fetched', async () => {
      const r = await kubectl(['auth', 'whoami', '-o', 'json'], { kubeconfig: kc });
      return r.code === 0 ? (JSON.parse(r.stdout) as Whoami).status.userInfo : false;
    });
    assert.equal(u.username, 'cel:erin');
    assert.deepEqual(u.groups, ['role:dev', 'system:authenticated']);
    assert.deepEqual(u.extra?.['example.com/team'], ['blue']);
    for (const sub of ['mallory', 'system:x']) {
      const bad = writeKubeconfig(path.join(dir, `bad-${sub.replace(/:/g, '')}.kubeconfig`), kapi.kubeconfig, {
        token: await issuer.sign({ sub, roles: [] }),
      });
      const r = await kubectl(['auth', 'whoami'], { kubeconfig: bad });
      assert.match(r.stderr, /Unauthorized/);
    }
  });

  it('anonymous requests are accepted on the listed paths only', async () => {
    const get = (p: string) =>
      new Promise<number>((resolve, reject) => {
        https
          .get(`${kapi.url}${p}`, { rejectUnauthorized: false }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject);
      });
    assert.equal(await get('/livez'), 200);
    assert.equal(await get('/readyz'), 401);
    assert.equal(await get('/api'), 401);
  });

  it('kapi refuses to start with --authentication-config and --oidc-* together, or with --anonymous-auth', async () => {
    const cfg = path.join(dir, 'authn.json');
    await assert.rejects(
      startKapi({
        extraArgs: ['--authentication-config', cfg, '--oidc-issuer-url', issuer.url, '--oidc-client-id', 'x'],
        readyTimeoutMs: 30000,
      }),
      /authentication-config file and oidc-\* flags are mutually exclusive/,
    );
    await assert.rejects(
      startKapi({ extraArgs: ['--authentication-config', cfg, '--anonymous-auth=true'], readyTimeoutMs: 30000 }),
      /--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file/,
    );
  });
});
