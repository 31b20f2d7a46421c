import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { createCA, generateKey, issueCert } from '../pki/x509.js';
import { freePort } from '../../storage/testing/etcd-server.js';
import { createWebhookTokenAuthenticator, parseReviewAnswer, type WebhookTokenOptions } from './webhook-token.js';

interface Seen {
  body: Record<string, unknown>;
  clientCN: string | undefined;
  authorization: string | undefined;
}

/** what the test webhook does with a review: a status, or a raw HTTP answer */
type Behaviour = (review: Record<string, unknown>) => {
  status?: Record<string, unknown>;
  code?: number;
  text?: string;
  headers?: Record<string, string>;
  apiVersion?: string;
};

const fastBackoff = { initialMs: 1, factor: 1.5, jitter: 0.2, steps: 5 };

describe('webhook token authenticator against a loopback HTTPS TokenReview server', () => {
  let dir: string;
  let server: https.Server;
  let port: number;
  let seen: Seen[] = [];
  let behaviour: Behaviour = () => ({ status: { authenticated: false } });
  const kubeconfig: Record<string, string> = {};
  const made: { close(): void }[] = [];

  const make = (over: Partial<WebhookTokenOptions> = {}) => {
    const a = createWebhookTokenAuthenticator({
      kubeConfigFile: kubeconfig.cert!,
      version: 'v1beta1',
      cacheTTLMs: 60_000,
      implicitAudiences: ['https://kubernetes.default.svc.cluster.local'],
      backoff: fastBackoff,
      ...over,
    });
    made.push(a);
    return a;
  };
  const API = ['https://kubernetes.default.svc.cluster.local'];

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authn-webhook-'));
    const caKey = await generateKey('ecdsa');
    const ca = await createCA('token-webhook-ca', 1, caKey);
    const serverKey = await generateKey('ecdsa');
    const serverCert = await issueCert(ca, { commonName: '127.0.0.1', sans: ['127.0.0.1'], usage: 'server', validDays: 1 }, serverKey);
    const clientKey = await generateKey('ecdsa');
    const clientCert = await issueCert(ca, { commonName: 'kapi-apiserver', usage: 'client', validDays: 1 }, clientKey);
    port = await freePort();
    server = https.createServer(
      { cert: serverCert, key: serverKey.privateKeyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        let text = '';
        req.on('data', (c: Buffer) => (text += c.toString()));
        req.on('end', () => {
          const body = JSON.parse(text) as Record<string, unknown>;
          const peer = (req.socket as TLSSocket).getPeerCertificate();
          seen.push({
            body,
            clientCN: (req.socket as TLSSocket).authorized ? (peer.subject?.CN as string | undefined) : undefined,
            authorization: req.headers.authorization,
          });
          const answer = behaviour(body);
          res.writeHead(answer.code ?? 200, { 'Content-Type': 'application/json', ...(answer.headers ?? {}) });
          if (answer.text !== undefined) return res.end(answer.text);
          res.end(
            JSON.stringify({
              apiVersion: answer.apiVersion ?? body.apiVersion,
              kind: 'TokenReview',
              metadata: {},
              spec: body.spec,
              status: answer.status,
            }),
          );
        });
      },
    );
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const write = (name: string, user: Record<string, string>, server: string) => {
      const file = path.join(dir, `${name}.kubeconfig`);
      writeFileSync(
        file,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'hook', cluster: { server, 'certificate-authority-data': b64(ca.certPem) } }],
          users: [{ name: 'kapi', user }],
          contexts: [{ name: 'hook', context: { cluster: 'hook', user: 'kapi' } }],
          'current-context': 'hook',
        }),
      );
      kubeconfig[name] = file;
    };
    const url = `https://127.0.0.1:${port}/authenticate`;
    write('cert', { 'client-certificate-data': b64(clientCert), 'client-key-data': b64(clientKey.privateKeyPem) }, url);
    write('token', { token: 'webhook-secret' }, url);
    write('down', {}, `https://127.0.0.1:${await freePort()}/authenticate`);
  });
  after(async () => {
    for (const a of made) a.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });
  const reset = (b: Behaviour) => {
    seen = [];
    behaviour = b;
  };

  it('sends a v1beta1 TokenReview with token and audiences, with the client certificate, and maps the user', async () => {
    reset(() => ({
      status: { authenticated: true, user: { username: 'jane', uid: 'j-1', groups: ['devs'], extra: { scopes: ['a', 'b'] } } },
    }));
    const a = make();
    const res = await a.authenticate('tok-1', API);
    assert.deepEqual(res, { user: { username: 'jane', uid: 'j-1', groups: ['devs'], extra: { scopes: ['a', 'b'] } }, audiences: API });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.body.apiVersion, 'authentication.k8s.io/v1beta1');
    assert.equal(seen[0]!.body.kind, 'TokenReview');
    assert.deepEqual(seen[0]!.body.spec, { token: 'tok-1', audiences: API });
    assert.equal(seen[0]!.clientCN, 'kapi-apiserver');
  });

  it('speaks v1 when asked; without wanted audiences none are sent; a bearer token from the kubeconfig', async () => {
    reset(() => ({ status: { authenticated: true, user: { username: 'v1-user' } } }));
    const a = make({ version: 'v1', kubeConfigFile: kubeconfig.token! });
    const res = await a.authenticate('tok-v1', []);
    assert.deepEqual(res, { user: { username: 'v1-user', groups: [] }, audiences: [] });
    assert.equal(seen[0]!.body.apiVersion, 'authentication.k8s.io/v1');
    assert.deepEqual(seen[0]!.body.spec, { token: 'tok-v1' });
    assert.equal(seen[0]!.authorization, 'Bearer webhook-secret');
  });

  it('caches accepted and refused answers per token for the TTL, and asks again after it', async () => {
    reset((r) => ({
      status: (r.spec as { token: string }).token === 'good' ? { authenticated: true, user: { username: 'g' } } : { authenticated: false },
    }));
    const a = make();
    assert.equal((await a.authenticate('good', API))?.user.username, 'g');
    assert.equal(await a.authenticate('bad', API), null);
    assert.equal((await a.authenticate('good', API))?.user.username, 'g');
    assert.equal(await a.authenticate('bad', API), null);
    assert.equal(seen.length, 2);
    // concurrent requests with a new token share one review
    await Promise.all([a.authenticate('good2', API), a.authenticate('good2', API), a.authenticate('good2', API)]);
    assert.equal(seen.length, 3);

    const noCache = make({ cacheTTLMs: 0 });
    await noCache.authenticate('good', API);
    await noCache.authenticate('good', API);
    assert.equal(seen.length, 5);
  });

  it('a refusal with status.error is an error and is not cached', async () => {
    reset(() => ({ status: { authenticated: false, error: 'token expired upstream' } }));
    const a = make();
    await assert.rejects(a.authenticate('t', API), /token expired upstream/);
    await assert.rejects(a.authenticate('t', API), /token expired upstream/);
    assert.equal(seen.length, 2);
  });

  it("audiences: the webhook's must meet the wanted ones; without any, the API audiences stand in", async () => {
    reset((r) => {
      const token = (r.spec as { token: string }).token;
      return {
        status: {
          authenticated: true,
          user: { username: 'u' },
          audiences: token === 'other-aud' ? ['other'] : token === 'both' ? ['x', 'y'] : [],
        },
      };
    });
    const a = make();
    assert.equal(await a.authenticate('other-aud', API), null);
    assert.deepEqual((await a.authenticate('both', ['y', 'z']))?.audiences, ['y']);
    assert.deepEqual((await a.authenticate('none', API))?.audiences, API);
    // a TokenReview for an audience the API does not have, answered without audiences
    assert.equal(await a.authenticate('none', ['elsewhere']), null);
  });

  it('retries a 500 and a 429 with backoff, then succeeds', async () => {
    let n = 0;
    reset(() => {
      n++;
      if (n === 1) return { code: 500, text: 'boom' };
      if (n === 2) return { code: 429, text: 'slow down' };
      return { status: { authenticated: true, user: { username: 'patient' } } };
    });
    const a = make();
    assert.equal((await a.authenticate('retry', API))?.user.username, 'patient');
    assert.equal(seen.length, 3);
  });

  it('gives up after the attempts, does not retry a bare 503 or a 400, retries a 503 with Retry-After', async () => {
    reset(() => ({ code: 500, text: 'always' }));
    const errs: Error[] = [];
    const a = make({ onError: (e) => errs.push(e) });
    await assert.rejects(a.authenticate('x', API), /answered 500/);
    assert.equal(seen.length, 5);
    assert.equal(errs.length, 1);

    reset(() => ({ code: 503, text: 'unavailable' }));
    await assert.rejects(a.authenticate('y', API), /answered 503/);
    assert.equal(seen.length, 1);

    reset(() => ({ code: 400, text: 'bad' }));
    await assert.rejects(a.authenticate('z', API), /answered 400/);
    assert.equal(seen.length, 1);

    let n = 0;
    reset(() =>
      ++n === 1
        ? { code: 503, text: 'later', headers: { 'Retry-After': '1' } }
        : { status: { authenticated: true, user: { username: 'later' } } },
    );
    assert.equal((await a.authenticate('w', API))?.user.username, 'later');
    assert.equal(seen.length, 2);
  });

  it('an answer of another version or kind, or not JSON, is an error', async () => {
    const a = make();
    reset(() => ({ status: { authenticated: true, user: { username: 'u' } }, apiVersion: 'authentication.k8s.io/v1' }));
    await assert.rejects(a.authenticate('wrong-version', API), /authentication\.k8s\.io\/v1beta1 TokenReview/);
    reset(() => ({ text: '<html>' }));
    await assert.rejects(a.authenticate('html', API), /decoding/);
    assert.equal(seen.length, 1);
    assert.throws(() => parseReviewAnswer('{"kind":"Status","apiVersion":"v1"}', 'v1'));
    assert.equal(parseReviewAnswer('{"status":{"authenticated":true,"user":{"username":"x"}}}', 'v1').authenticated, true);
  });

  it('an unreachable webhook is an error (logged), never cached', async () => {
    const errs: Error[] = [];
    const a = make({ kubeConfigFile: kubeconfig.down!, onError: (e) => errs.push(e) });
    await assert.rejects(a.authenticate('t', API), /failed to make webhook authenticator request/);
    await assert.rejects(a.authenticate('t', API));
    assert.equal(errs.length, 2);
  });

  it('refuses an unsupported version and a kubeconfig without a server', () => {
    assert.throws(() => make({ version: 'v2' }), /unsupported authentication webhook version "v2"/);
    const file = path.join(dir, 'empty.kubeconfig');
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [] }));
    assert.throws(() => make({ kubeConfigFile: file }), /invalid configuration: no configuration has been provided/);
    writeFileSync(
      file,
      JSON.stringify({
        'current-context': 'c',
        contexts: [{ name: 'c', context: { cluster: 'k' } }],
        clusters: [{ name: 'k', cluster: {} }],
      }),
    );
    assert.throws(() => make({ kubeConfigFile: file }), /invalid configuration: no server found for cluster "k"/);
  });
});
