// Start-up rules of kapi's authentication (kube-apiserver's flag errors and exclusions),
// anonymous access, and reloading the authentication configuration file.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseFlagSet } from '../machinery/flagset.js';
import { FLAG_SPECS } from '../config/flags.js';
import { createTestPKI, type TestPKI } from '../pki/testing.js';
import { buildAuthentication, type Authentication } from './index.js';
import { staticLookup } from './object-lookup.js';
import { startTestIssuer, type TestIssuer } from './jwt/testing-issuer.js';

const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
let dir: string;
let pki: TestPKI;
let issuer: TestIssuer;
const built: Authentication[] = [];

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authn-'));
  pki = createTestPKI();
  issuer = await startTestIssuer();
});
after(async () => {
  built.forEach((a) => a.close());
  await issuer?.close();
  pki?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function build(args: string[]): Authentication {
  const { values, set } = parseFlagSet(args, FLAG_SPECS);
  const a = buildAuthentication({
    values,
    explicitlySet: set,
    resolvePath: (p) => path.resolve(dir, p),
    clientCaPem: pki.ca.cert,
    generatedServiceAccountKeyPem: sa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
    generatedServiceAccountPublicKeyPem: sa.publicKey.export({ type: 'spki', format: 'pem' }) as string,
    tlsPrivateKeyFile: '',
    lookup: staticLookup({}),
    configCheckIntervalMs: 50,
  });
  built.push(a);
  return a;
}

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

const authConfig = (jwt: string, extra = '') =>
  `apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n${jwt}\n${extra}`;

describe('authentication start-up', () => {
  it("defaults: kapi's issuer, API audiences = issuers, anonymous only for health paths under AlwaysAllow", () => {
    const a = build([]);
    assert.deepEqual(a.serviceAccounts.issuers, ['https://kubernetes.default.svc.cluster.local']);
    assert.deepEqual(a.apiAudiences, ['https://kubernetes.default.svc.cluster.local']);
    assert.equal(a.anonymous.enabled, true);
    assert.ok(a.anonymous.paths?.includes('/readyz'));
    assert.equal(build(['--authorization-mode', 'RBAC']).anonymous.paths, undefined);
    assert.equal(build(['--anonymous-auth=false', '--authorization-mode', 'RBAC']).anonymous.enabled, false);
    assert.deepEqual(
      build(['--service-account-issuer', 'https://a', '--service-account-issuer', 'https://b', '--api-audiences', 'x']).apiAudiences,
      ['x'],
    );
  });

  it("refuses kube-apiserver's invalid combinations with its messages", () => {
    const cfg = file('authn.yaml', authConfig('jwt: []', 'anonymous: {enabled: true}'));
    assert.throws(
      () => build(['--authentication-config', cfg, '--oidc-client-id', 'x']),
      /authentication-config file and oidc-\* flags are mutually exclusive/,
    );
    assert.throws(
      () => build(['--oidc-client-id', 'x']),
      /oidc-issuer-url and oidc-client-id must be specified together when any oidc-\* flags are set/,
    );
    assert.throws(
      () => build(['--authentication-config', cfg, '--anonymous-auth=true']),
      /--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file/,
    );
    assert.throws(
      () => build(['--oidc-issuer-url', 'http://i', '--oidc-client-id', 'c']),
      /invalid authentication configuration: jwt\[0\].issuer.url: Invalid value: "http:\/\/i": URL scheme must be https/,
    );
    assert.throws(
      () => build(['--oidc-issuer-url', 'https://i', '--oidc-client-id', 'c', '--oidc-signing-algs', 'HS256']),
      /oidc: unsupported signing alg: "HS256"/,
    );
    assert.throws(
      () => build(['--service-account-issuer', 'https://a', '--service-account-issuer', 'https://a']),
      /service-account-issuer "https:\/\/a" is already specified/,
    );
    assert.throws(() => build(['--service-account-jwks-uri', 'http://x/jwks']), /service-account-jwks-uri requires https scheme/);
    assert.throws(
      () => build(['--authentication-config', file('bad.yaml', 'kind: Nope\napiVersion: v1\n')]),
      /failed to load authentication configuration from file/,
    );
    assert.throws(() => build(['--token-auth-file', file('short.csv', 'a,b\n')]), /must have at least 3 columns/);
  });

  it('anonymous from the configuration file: enabled for the listed paths only', () => {
    const a = build([
      '--authentication-config',
      file('anon.yaml', authConfig('jwt: []', 'anonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n  - path: /readyz\n')),
    ]);
    assert.deepEqual(a.anonymous, { enabled: true, paths: ['/livez', '/readyz'] });
  });

  it('TokenReview adds system:authenticated; unknown tokens are not authenticated', async () => {
    const a = build(['--token-auth-file', file('tokens.csv', 't1,alice,uid1,"g1"\n')]);
    assert.deepEqual(await a.tokenReview.authenticate('t1', []), {
      user: { username: 'alice', uid: 'uid1', groups: ['g1', 'system:authenticated'] },
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
    assert.equal(await a.tokenReview.authenticate('nope', []), null);
  });

  it('reloads the configuration file when it changes; an invalid change keeps the old authenticators', async () => {
    const jwt = (prefix: string) =>
      `jwt:\n- issuer:\n    url: ${issuer.url}\n    audiences: [kapi]\n    certificateAuthority: |\n${issuer.caPem
        .trim()
        .split('\n')
        .map((l) => '      ' + l)
        .join('\n')}\n  claimMappings:\n    username: {claim: sub, prefix: "${prefix}"}\n`;
    const cfg = file('reload.yaml', authConfig(jwt('one:')));
    const a = build(['--authentication-config', cfg]);
    const token = await issuer.sign({ sub: 'ann' });
    const who = async () => {
      for (let i = 0; i < 100; i++) {
        const r = await a.tokenReview.authenticate(token, []);
        if (r) return r.user.username;
        await new Promise((res) => setTimeout(res, 50));
      }
      return undefined;
    };
    assert.equal(await who(), 'one:ann');
    writeFileSync(cfg, authConfig(jwt('two:')));
    assert.equal(a.reloadConfig(), true);
    assert.equal(await who(), 'two:ann');
    writeFileSync(cfg, authConfig(jwt('three:').replace('audiences: [kapi]', 'audiences: []')));
    assert.equal(a.reloadConfig(), false);
    assert.equal(await who(), 'two:ann');
  });
});
