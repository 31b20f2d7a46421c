// The HTTP serving flags against a real kapi, with real clients: --request-timeout (504 as
// kube-apiserver writes it, ?timeout= only shortening it, kubectl 1.33 showing it), a watch
// ended by --min-request-timeout, --cors-allowed-origins (preflight without credentials),
// --strict-transport-security-directives, --tls-min-version=VersionTLS13 (TLS 1.2 refused),
// --tls-sni-cert-key (certificate by server name), --http2-max-streams-per-connection,
// --goaway-chance (an HTTP/2 client is sent GOAWAY sooner or later), and on SIGTERM with
// --shutdown-send-retry-after the 429s while a request is still in flight.
//
// Held requests are deterministic: a create whose body the client withholds cannot finish.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import http2 from 'node:http2';
import tls from 'node:tls';
import type { IncomingHttpHeaders } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, loadKubeconfig, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

interface RawOptions {
  method?: string;
  headers?: Record<string, string>;
  /** no client certificate (anonymous) */
  anonymous?: boolean;
  /** the body's length is announced, the body is sent only by `finish()` */
  withheldBody?: Buffer;
}

/** one HTTP/1.1 request on its own connection, with the admin certificate unless anonymous */
function raw(kapi: KapiProcess, path: string, opts: RawOptions = {}): { answer: Promise<Answer>; finish(): void } {
  const creds = loadKubeconfig(kapi.kubeconfig);
  const headers: Record<string, string> = { accept: 'application/json', ...(opts.headers ?? {}) };
  if (opts.withheldBody) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(opts.withheldBody.length);
  }
  const req = https.request({
    host: '127.0.0.1',
    port: kapi.port,
    method: opts.method ?? 'GET',
    path,
    headers,
    ca: creds.ca,
    ...(opts.anonymous ? {} : { cert: creds.cert, key: creds.key }),
    agent: false,
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
  });
  if (opts.withheldBody) req.flushHeaders();
  else req.end();
  return { answer, finish: () => req.end(opts.withheldBody) };
}

const get = (kapi: KapiProcess, path: string, opts: RawOptions = {}): Promise<Answer> => raw(kapi, path, opts).answer;

/** a ConfigMap create that cannot finish until `finish()` sends its body */
function heldCreate(kapi: KapiProcess, ns: string, query: string): { answer: Promise<Answer>; finish(): void } {
  const body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: uniqueName('held') } }));
  return raw(kapi, `/api/v1/namespaces/${ns}/configmaps${query}`, { method: 'POST', withheldBody: body });
}

const TIMEOUT_STATUS = {
  metadata: {},
  status: 'Failure',
  message: 'Timeout: request did not complete within the allotted timeout',
  reason: 'Timeout',
  details: {},
  code: 504,
};

describe('HTTP serving flags', () => {
  let kapi: KapiProcess;
  let dir: string;
  const ns = uniqueName('serving');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });

  before(async () => {
    // a second serving certificate, for clients that ask for sni.example (or *.wild.example)
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-serving-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        'sni.key',
        '-out',
        'sni.crt',
        '-days',
        '2',
        '-subj',
        '/CN=sni.example',
        '-addext',
        'subjectAltName=DNS:sni.example',
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    kapi = await startKapi({
      extraArgs: [
        `--tls-sni-cert-key=${path.join(dir, 'sni.crt')},${path.join(dir, 'sni.key')}:sni.example,*.wild.example`,
        '--http2-max-streams-per-connection=250',
        '--request-timeout=4s',
        '--min-request-timeout=1',
        '--cors-allowed-origins=^https://dashboard\\.example(:|$),//other\\.example$',
        '--strict-transport-security-directives=max-age=31536000,includeSubDomains',
        '--tls-min-version=VersionTLS13',
        '--goaway-chance=0.02',
      ],
    });
    await kubectlOk(['create', 'namespace', ns], admin());
  });
  after(async () => {
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a ?timeout= shorter than --request-timeout ends a request that cannot finish with the bare 504 Status', async () => {
    const held = heldCreate(kapi, ns, '?timeout=1s');
    try {
      const res = await held.answer;
      assert.equal(res.status, 504);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.deepEqual(JSON.parse(res.body), TIMEOUT_STATUS);
    } finally {
      held.finish();
    }
  });

  it('without ?timeout= the flag is the limit; a longer ?timeout= does not lengthen it', async () => {
    const held = heldCreate(kapi, ns, '?timeout=10m');
    try {
      const res = await held.answer;
      assert.equal(res.status, 504);
      assert.deepEqual(JSON.parse(res.body), TIMEOUT_STATUS);
    } finally {
      held.finish();
    }
  });

  it('the work behind a timed-out request (its body sent late) writes no second answer; kapi keeps serving', async () => {
    // the held bodies above were sent after the 504s: the aborted creates ran into answers
    // that go nowhere; one more, then the server must be healthy and have logged no failure
    const held = heldCreate(kapi, ns, '?timeout=500ms');
    assert.equal((await held.answer).status, 504);
    held.finish();
    assert.equal((await get(kapi, `/api/v1/namespaces/${ns}/configmaps`)).status, 200);
    assert.equal((await get(kapi, '/readyz')).status, 200);
    assert.doesNotMatch(kapi.logs(), /ERR_HTTP_HEADERS_SENT|ERR_STREAM_WRITE_AFTER_END|request handler failed|unhandled/);
  });

  it('a malformed ?timeout= is a 400 BadRequest Status', async () => {
    const res = await get(kapi, `/api/v1/namespaces/${ns}/configmaps?timeout=later`);
    assert.equal(res.status, 400);
    const status = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(status.reason, 'BadRequest');
    assert.equal(status.message, 'invalid timeout specified in the request URL - time: invalid duration "later"');
  });

  it('kubectl 1.33: --request-timeout is accepted; an expired ?timeout= shows as a server timeout', async () => {
    assert.match(await kubectlOk(['get', 'namespace', ns, '--request-timeout=30s'], admin()), new RegExp(ns));
    const late = await kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/configmaps?timeout=1ns`], admin());
    assert.notEqual(late.code, 0);
    assert.match(late.stderr, /Error from server \(Timeout\): the server was unable to return a response in the time allotted/);
  });

  it('a watch without timeoutSeconds ends after --min-request-timeout (1 s) to 2x that', async () => {
    const creds = loadKubeconfig(kapi.kubeconfig);
    const sent = performance.now();
    let headersAt = 0;
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request({
        host: '127.0.0.1',
        port: kapi.port,
        path: `/api/v1/namespaces/${ns}/configmaps?watch=true`,
        ca: creds.ca,
        cert: creds.cert,
        key: creds.key,
        agent: false,
      });
      req.on('error', reject);
      req.on('response', (res) => {
        headersAt = performance.now();
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.end();
    });
    const ended = performance.now();
    assert.equal(status, 200);
    // kapi starts the watch's clock after the request arrives and before it answers the
    // headers: the time since sending bounds it from above, the time since the headers from
    // below; only the upper end gets room for a loaded machine delaying the end
    assert.ok(ended - sent >= 1000, `ended ${Math.round(ended - sent)} ms after the request, before --min-request-timeout`);
    assert.ok(
      ended - headersAt < 2000 + 500,
      `ended ${Math.round(ended - headersAt)} ms after the headers, past 2 x --min-request-timeout`,
    );
  });

  it('CORS: a preflight from an allowed origin is answered 204 without credentials; others get no CORS headers', async () => {
    const pre = await get(kapi, '/api/v1/namespaces', {
      method: 'OPTIONS',
      anonymous: true,
      headers: { origin: 'https://dashboard.example', 'access-control-request-method': 'GET' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'https://dashboard.example');
    assert.equal(pre.headers['access-control-allow-methods'], 'POST, GET, OPTIONS, PUT, DELETE, PATCH');
    assert.equal(pre.headers['access-control-allow-credentials'], 'true');
    assert.equal(pre.headers['access-control-expose-headers'], 'Date');
    const listed = await get(kapi, '/api/v1/namespaces', { headers: { origin: 'https://other.example' } });
    assert.equal(listed.status, 200);
    assert.equal(listed.headers['access-control-allow-origin'], 'https://other.example');
    const foreign = await get(kapi, '/api/v1/namespaces', { headers: { origin: 'https://dashboard.example.evil.test' } });
    assert.equal(foreign.status, 200);
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
    const refused = await get(kapi, '/api/v1/namespaces', { method: 'OPTIONS', anonymous: true, headers: { origin: 'https://evil.test' } });
    assert.notEqual(refused.status, 204);
  });

  it('HSTS: every response carries the Strict-Transport-Security directives', async () => {
    for (const [path, anonymous] of [
      ['/version', false],
      ['/api/v1/namespaces/nope-nope', false],
      ['/api/v1/namespaces', true],
    ] as const) {
      const res = await get(kapi, path, { anonymous });
      assert.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', path);
    }
  });

  it('--tls-min-version=VersionTLS13: a TLS 1.2 client is refused, TLS 1.3 is served', async () => {
    const handshake = (maxVersion: tls.SecureVersion) =>
      new Promise<string>((resolve) => {
        const s = tls.connect({ host: '127.0.0.1', port: kapi.port, maxVersion, rejectUnauthorized: false }, () => {
          resolve(s.getProtocol() ?? '');
          s.end();
        });
        s.on('error', (err) => resolve(`error: ${err.message}`));
      });
    assert.match(await handshake('TLSv1.2'), /^error: /);
    assert.equal(await handshake('TLSv1.3'), 'TLSv1.3');
  });

  it('--tls-sni-cert-key: the certificate follows the name the client asks for; others get the default one', async () => {
    const subject = (servername?: string) =>
      new Promise<string>((resolve, reject) => {
        const s = tls.connect({ host: '127.0.0.1', port: kapi.port, servername, rejectUnauthorized: false }, () => {
          resolve(String(s.getPeerCertificate().subject?.CN));
          s.end();
        });
        s.on('error', reject);
      });
    assert.equal(await subject('sni.example'), 'sni.example');
    assert.equal(await subject('a.wild.example'), 'sni.example');
    assert.notEqual(await subject('localhost'), 'sni.example');
    // the default certificate still serves kubectl
    assert.match(await kubectlOk(['get', 'namespace', ns], admin()), new RegExp(ns));
  });

  it('--http2-max-streams-per-connection: HTTP/2 clients are told the limit', async () => {
    const creds = loadKubeconfig(kapi.kubeconfig);
    const session = http2.connect(kapi.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
    try {
      const settings = await new Promise<http2.Settings>((resolve, reject) => {
        session.once('remoteSettings', resolve);
        session.once('error', reject);
      });
      assert.equal(settings.maxConcurrentStreams, 250);
    } finally {
      session.close();
    }
  });

  it('--goaway-chance=0.02: an HTTP/2 client making requests is sent GOAWAY sooner or later, and every request is answered', async () => {
    const creds = loadKubeconfig(kapi.kubeconfig);
    const connect = () => http2.connect(kapi.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
    let session = connect();
    let goaways = 0;
    let refused = 0;
    const watchGoaway = (s: http2.ClientHttp2Session) => s.once('goaway', () => goaways++);
    watchGoaway(session);
    try {
      // 0.98^3000 is about 1e-26: the bound is never what ends the loop
      for (let i = 0; i < 3000 && goaways === 0; i++) {
        if (session.closed || session.destroyed) {
          session = connect();
          watchGoaway(session);
        }
        const status = await new Promise<number>((resolve, reject) => {
          const stream = session.request({ ':path': '/version' });
          let code = 0;
          stream.on('response', (h) => (code = Number(h[':status'])));
          stream.on('data', () => {});
          stream.on('end', () => resolve(code));
          stream.on('error', (err: Error & { code?: string }) => {
            // opened after the server's GOAWAY crossed it: refused, safe to send again
            if (/REFUSED_STREAM/.test(err.message)) resolve(-1);
            else reject(err);
          });
          stream.end();
        });
        if (status === -1) {
          refused++;
          continue;
        }
        assert.equal(status, 200);
      }
      assert.ok(goaways > 0, `GOAWAY seen (${refused} streams refused after one)`);
    } finally {
      session.close();
    }
  });
});

describe('--shutdown-send-retry-after and --shutdown-watch-termination-grace-period', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('shutdown');

  before(async () => {
    kapi = await startKapi({
      extraArgs: ['--shutdown-send-retry-after', '--shutdown-watch-termination-grace-period=5s', '--request-timeout=60s'],
    });
    await kubectlOk(['create', 'namespace', ns], { kubeconfig: kapi.kubeconfig });
  });
  after(async () => {
    await kapi?.stop();
  });

  it('after SIGTERM, while a request is in flight, new requests get 429 + Retry-After + Connection: close; health is served; watches end', async () => {
    const creds = loadKubeconfig(kapi.kubeconfig);
    // one HTTP/2 session: its streams reach the server in the order they are opened
    const session = http2.connect(kapi.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
    session.on('error', () => {});
    const open = (headers: http2.OutgoingHttpHeaders) => {
      const stream = session.request(headers);
      const response = new Promise<number>((resolve, reject) => {
        stream.on('response', (h) => resolve(Number(h[':status'])));
        stream.on('error', reject);
      });
      const ended = new Promise<string>((resolve) => {
        let body = '';
        stream.on('data', (c: Buffer) => (body += c.toString()));
        stream.on('end', () => resolve(body));
        stream.on('error', () => resolve(body));
      });
      return { stream, response, ended };
    };
    try {
      const watch = open({ ':path': `/api/v1/namespaces/${ns}/configmaps?watch=true&timeoutSeconds=600` });
      watch.stream.end();
      assert.equal(await watch.response, 200);
      const body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held' } }));
      const held = open({
        ':method': 'POST',
        ':path': `/api/v1/namespaces/${ns}/configmaps`,
        'content-type': 'application/json',
        'content-length': String(body.length),
      });
      const probe = open({ ':path': `/api/v1/namespaces/${ns}/configmaps` });
      probe.stream.end();
      // answered after the held create's headers arrived: that request is in flight now
      assert.equal(await probe.response, 200);

      process.kill(kapi.pid, 'SIGTERM');
      try {
        const refused = await waitFor(
          'a 429 from the shutting-down kapi',
          async () => {
            const res = await get(kapi, `/api/v1/namespaces/${ns}/configmaps`);
            return res.status === 429 ? res : undefined;
          },
          30_000,
          100,
        );
        assert.equal(refused.headers['retry-after'], '5');
        assert.equal(refused.headers.connection, 'close');
        assert.equal(refused.body, 'The apiserver is shutting down, please try again later.\n');
        assert.notEqual((await get(kapi, '/readyz')).status, 429);
        assert.equal((await get(kapi, '/livez')).status, 200);
        // the watch was ended (cleanly) once new requests stopped being accepted
        await watch.ended;
      } finally {
        held.stream.end(body);
      }
      // the request in flight is answered, then the listener closes
      assert.equal(await held.response, 201);
      await waitFor(
        'the listener to close',
        async () => {
          try {
            await get(kapi, '/livez');
            return undefined;
          } catch {
            return true;
          }
        },
        30_000,
        100,
      );
    } finally {
      session.destroy();
    }
  });
});
