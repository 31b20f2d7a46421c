// HTTP/1.1 clients that end their side of the connection after sending their requests (a
// `printf ... | openssl s_client`, a raw socket's end()). Go's server, and so kube-apiserver,
// still writes the answers, and cancels each request's context at the client's end: work that
// finishes anyway answers as usual, a write cut short answers kube's 504 for a cancelled
// context. Never a 500, never silence.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { createNamespace, loadKubeconfig, startKapi, uniqueName, type KapiProcess } from './harness.js';

/** writes `wire` on a new TLS connection with the admin certificate, ends its side at once and
 *  reads until kapi closes */
function halfClosed(kapi: KapiProcess, wire: string): Promise<string> {
  const creds = loadKubeconfig(kapi.kubeconfig);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = tls.connect(
      { host: '127.0.0.1', port: kapi.port, ca: creds.ca, cert: creds.cert, key: creds.key, ALPNProtocols: ['http/1.1'] },
      () => {
        socket.write(wire);
        socket.end();
      },
    );
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end within 20 s; got ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`));
    }, 20_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
  });
}

/** the status lines in what came back (a body without a final newline runs into the next one) */
const statusLines = (answer: string): string[] => [...answer.matchAll(/HTTP\/1\.1 \d\d\d [^\r]*(?=\r\n)/g)].map((m) => m[0]);

const CANCELLED = 'Timeout: request did not complete within requested timeout - context canceled';

describe('HTTP/1.1 clients that half-close after their requests', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('half-close');

  before(async () => {
    kapi = await startKapi();
    await createNamespace(kapi.http, ns);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: ns }, data: { a: '1' } };
    const res = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, JSON.stringify(cm));
    assert.equal(res.status, 201, res.body);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('pipelined GETs sent before the end are all answered, then the connection ends', async () => {
    const wire =
      'GET /healthz HTTP/1.1\r\nHost: kapi\r\n\r\n' +
      'GET /version HTTP/1.1\r\nHost: kapi\r\n\r\n' +
      'GET /livez HTTP/1.1\r\nHost: kapi\r\n\r\n';
    const answer = await halfClosed(kapi, wire);
    assert.deepEqual(statusLines(answer), ['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 200 OK'], answer.slice(0, 600));
    assert.match(answer, /"gitVersion"/);
  });

  it('a write whose client ends its side right after the body: its answer, or the 504 of a cancelled context; never a 500', async (t) => {
    const body = JSON.stringify({ data: { b: '2' } });
    const wire =
      `PATCH /api/v1/namespaces/${ns}/configmaps/one HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/merge-patch+json\r\n` +
      `Expect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await halfClosed(kapi, wire);
      const lines = statusLines(answer).filter((l) => !l.startsWith('HTTP/1.1 100 '));
      assert.equal(lines.length, 1, answer.slice(0, 600));
      seen.push(lines[0]!);
      if (lines[0] === 'HTTP/1.1 504 Gateway Timeout') {
        assert.ok(answer.includes(CANCELLED), answer.slice(0, 600));
        assert.match(answer, /"reason":"Timeout"/);
      } else {
        assert.equal(lines[0], 'HTTP/1.1 200 OK', answer.slice(0, 600));
      }
    }
    t.diagnostic(`answers: ${seen.join(', ')}`);
    // kapi serves on
    assert.equal((await kapi.http.get(`/api/v1/namespaces/${ns}/configmaps/one`)).status, 200);
  });
});
