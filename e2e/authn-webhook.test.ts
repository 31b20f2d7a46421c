// Webhook token authentication with kubectl 1.33 against a real kapi: a loopback HTTPS
// TokenReview service (own CA, kapi's client certificate required) named by
// --authentication-token-webhook-config-file. `kubectl --token=<t> auth whoami` shows the
// webhook's user; a refused token is 401; answers are cached per token (the webhook is not
// asked again within the TTL, even for a refusal); tokens an earlier method knows never reach
// the webhook; kapi's own TokenReview endpoint asks it too; with the webhook down a new token
// is 401 while a cached one still works.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { freePort, kubectl, kubectlOk, startKapi, writeKubeconfig, type KapiProcess } from './harness.js';

interface TokenReviewService {
  kubeconfig: string;
  /** how many reviews of this token arrived */
  calls(token: string): number;
  /** the bodies received, in order */
  reviews: Record<string, unknown>[];
  close(): Promise<void>;
}

/** the users the service knows, by token; any other token is refused */
const USERS: Record<string, Record<string, unknown>> = {
  'hook-token-jane': {
    username: 'jane@example.com',
    uid: 'jane-42',
    groups: ['hook:devs', 'hook:oncall'],
    extra: { 'example.com/team': ['blue'] },
  },
  'hook-token-cached': { username: 'carl', groups: ['hook:cached'] },
  'hook-token-review': { username: 'rita', groups: [] },
};

async function startTokenReviewService(dir: string): Promise<TokenReviewService> {
  const caKey = await generateKey('ecdsa');
  const ca = await createCA('token-review-ca', 1, caKey);
  const serverKey = await generateKey('ecdsa');
  const serverCert = await issueCert(ca, { commonName: '127.0.0.1', sans: ['127.0.0.1'], usage: 'server', validDays: 1 }, serverKey);
  const clientKey = await generateKey('ecdsa');
  const clientCert = await issueCert(ca, { commonName: 'kapi', usage: 'client', validDays: 1 }, clientKey);
  const port = await freePort();
  const counts = new Map<string, number>();
  const reviews: Record<string, unknown>[] = [];
  const server = https.createServer(
    { cert: serverCert, key: serverKey.privateKeyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(text) as { apiVersion: string; spec: { token: string; audiences?: string[] } };
        reviews.push({ ...review, clientCN: (req.socket as TLSSocket).getPeerCertificate().subject?.CN });
        counts.set(review.spec.token, (counts.get(review.spec.token) ?? 0) + 1);
        const user = USERS[review.spec.token];
        res.setHeader('Content-Type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: review.apiVersion,
            kind: 'TokenReview',
            status: user ? { authenticated: true, user } : { authenticated: false },
          }),
        );
      });
    },
  );
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const kubeconfig = path.join(dir, 'token-webhook.kubeconfig');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'authn', cluster: { server: `https://127.0.0.1:${port}/authenticate`, 'certificate-authority-data': b64(ca.certPem) } },
      ],
      users: [{ name: 'kapi', user: { 'client-certificate-data': b64(clientCert), 'client-key-data': b64(clientKey.privateKeyPem) } }],
      contexts: [{ name: 'authn', context: { cluster: 'authn', user: 'kapi' } }],
      'current-context': 'authn',
    }),
  );
  return {
    kubeconfig,
    calls: (token) => counts.get(token) ?? 0,
    reviews,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('authentication: --authentication-token-webhook-config-file with kubectl 1.33', () => {
  let dir: string;
  let kapi: KapiProcess;
  let hook: TokenReviewService;
  let hookClosed = false;
  // a kubeconfig with the cluster only: `--token` is the sole credential
  let bare: string;
  const whoami = async (token: string) =>
    (
      JSON.parse(await kubectlOk(['auth', 'whoami', '-o', 'json', `--token=${token}`], { kubeconfig: bare })) as {
        status: { userInfo: Record<string, unknown> };
      }
    ).status.userInfo;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authn-webhook-'));
    writeFileSync(path.join(dir, 'tokens.csv'), 'static-token-sam,sam,sam-uid,static\n');
    hook = await startTokenReviewService(dir);
    kapi = await startKapi({
      // a TTL no slow run outlasts (the default is 2m); the version is left at its default
      extraArgs: [
        '--token-auth-file',
        path.join(dir, 'tokens.csv'),
        '--authentication-token-webhook-config-file',
        hook.kubeconfig,
        '--authentication-token-webhook-cache-ttl',
        '10m',
      ],
    });
    bare = writeKubeconfig(path.join(dir, 'bare.kubeconfig'), kapi.kubeconfig, {});
  });
  after(async () => {
    await kapi?.stop();
    if (!hookClosed) await hook?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("kubectl auth whoami shows the webhook's user, uid, groups and extra, plus system:authenticated", async () => {
    const u = await whoami('hook-token-jane');
    assert.equal(u.username, 'jane@example.com');
    assert.equal(u.uid, 'jane-42');
    assert.deepEqual(u.groups, ['hook:devs', 'hook:oncall', 'system:authenticated']);
    assert.deepEqual(u.extra, { 'example.com/team': ['blue'] });
    // the default version is v1beta1, the API audiences go along, kapi shows its client certificate
    const review = hook.reviews.find((r) => (r.spec as { token: string }).token === 'hook-token-jane')!;
    assert.equal(review.apiVersion, 'authentication.k8s.io/v1beta1');
    assert.equal(review.kind, 'TokenReview');
    assert.deepEqual((review.spec as { audiences: string[] }).audiences, ['https://kubernetes.default.svc.cluster.local']);
    assert.equal(review.clientCN, 'kapi');
  });

  it('a token the webhook refuses is 401 Unauthorized', async () => {
    const r = await kubectl(['auth', 'whoami', '--token=hook-token-nobody'], { kubeconfig: bare });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Unauthorized/);
    const get = await kubectl(['get', 'ns', '--token=hook-token-nobody'], { kubeconfig: bare });
    assert.notEqual(get.code, 0);
    // kubectl 1.33 words a 401 during discovery so
    assert.match(get.stderr, /provide credentials/);
  });

  it('answers are cached per token: within the TTL the webhook is asked once, for acceptance and refusal alike', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await whoami('hook-token-cached')).username, 'carl');
    assert.equal(hook.calls('hook-token-cached'), 1);
    for (let i = 0; i < 3; i++) {
      const r = await kubectl(['auth', 'whoami', '--token=hook-token-refused-twice'], { kubeconfig: bare });
      assert.match(r.stderr, /Unauthorized/);
    }
    assert.equal(hook.calls('hook-token-refused-twice'), 1);
  });

  it('a token an earlier method (the static token file) knows never reaches the webhook', async () => {
    assert.equal((await whoami('static-token-sam')).username, 'sam');
    assert.equal(hook.calls('static-token-sam'), 0);
  });

  it("kapi's TokenReview endpoint asks the webhook too", async () => {
    const out = await kubectlOk(['create', '-o', 'json', '-f', '-'], {
      kubeconfig: kapi.kubeconfig,
      input: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'hook-token-review' } }),
    });
    const status = (JSON.parse(out) as { status: { authenticated?: boolean; user?: { username: string; groups: string[] } } }).status;
    assert.equal(status.authenticated, true);
    assert.equal(status.user?.username, 'rita');
    assert.deepEqual(status.user?.groups, ['system:authenticated']);
  });

  it('with the webhook down a new token is 401 (kapi keeps serving) and a cached one still works', async () => {
    await hook.close();
    hookClosed = true;
    const r = await kubectl(['auth', 'whoami', '--token=hook-token-after-outage'], { kubeconfig: bare });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Unauthorized/);
    assert.match(kapi.logs(), /failed to make webhook authenticator request/);
    assert.equal((await whoami('hook-token-cached')).username, 'carl');
    await kubectlOk(['get', 'ns'], { kubeconfig: kapi.kubeconfig });
  });
});

describe('authentication: --authentication-token-webhook-version=v1 and --authentication-token-webhook-cache-ttl=0s', () => {
  let dir: string;
  let kapi: KapiProcess;
  let hook: TokenReviewService;
  let bare: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authn-webhook-v1-'));
    hook = await startTokenReviewService(dir);
    kapi = await startKapi({
      extraArgs: [
        '--authentication-token-webhook-config-file',
        hook.kubeconfig,
        '--authentication-token-webhook-version',
        'v1',
        '--authentication-token-webhook-cache-ttl',
        '0s',
      ],
    });
    bare = writeKubeconfig(path.join(dir, 'bare.kubeconfig'), kapi.kubeconfig, {});
  });
  after(async () => {
    await kapi?.stop();
    await hook?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends authentication.k8s.io/v1 TokenReviews and asks again for every request without a cache', async () => {
    const out = await kubectlOk(['auth', 'whoami', '-o', 'json', '--token=hook-token-jane'], { kubeconfig: bare });
    assert.equal((JSON.parse(out) as { status: { userInfo: { username: string } } }).status.userInfo.username, 'jane@example.com');
    assert.ok(hook.reviews.length > 0);
    assert.ok(hook.reviews.every((r) => r.apiVersion === 'authentication.k8s.io/v1'));
    for (let i = 0; i < 2; i++) {
      const r = await kubectl(['auth', 'whoami', '--token=hook-token-refused'], { kubeconfig: bare });
      assert.match(r.stderr, /Unauthorized/);
    }
    assert.equal(hook.calls('hook-token-refused'), 2);
  });
});
