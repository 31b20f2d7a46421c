// Clients that stop reading, and large request heads, against a real kapi (real etcd):
//  - a list whose client never reads counts as in flight until the request timeout cuts it,
//    while the replica goes on serving /readyz and ordinary reads;
//  - many such clients: a JSON list streams, so each holds only what is in flight to its
//    socket; a list built whole (protobuf) reserves its size in --max-unread-response-mib
//    first, and the responses waiting longest are cut to keep within it;
//  - request heads up to Go's limits are accepted over HTTP/1.1 and HTTP/2 (a 900 KB header,
//    200 fields), a 2 MB one is refused (Go's 431 over HTTP/1.1; over HTTP/2 the connection
//    ends, where Go answers 431), and the python client's
//    long label selector works.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { createNamespace, loadKubeconfig, pythonKubernetesAvailable, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';
import { rawHttp2Get } from './raw-http2.js';

const BUDGET_MIB = 32;
const OBJECTS = 80;
const OBJECT_BYTES = 100 * 1024;

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

const MiB = 1024 * 1024;

/** a client that sends one request over HTTP/1.1 and then does not read */
interface StalledClient {
  /** resumes reading; resolves with what arrived once the server has ended the connection */
  collect(): Promise<Buffer>;
}

function stalledClient(kapi: KapiProcess, path: string, accept = 'application/json'): Promise<StalledClient> {
  const creds = loadKubeconfig(kapi.kubeconfig);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port: kapi.port,
      ALPNProtocols: ['http/1.1'],
      ca: creds.ca,
      cert: creds.cert,
      key: creds.key,
      servername: 'localhost',
    });
    socket.pause();
    const received: Buffer[] = [];
    // a generous upper bound: a connection the server never ends fails the test, not hangs it
    const closed = new Promise<Buffer>((done, fail) => {
      const timer = setTimeout(() => {
        socket.destroy();
        fail(new Error(`the server did not end a stalled response (${Buffer.concat(received).length} bytes arrived)`));
      }, 120_000);
      socket.once('close', () => {
        clearTimeout(timer);
        done(Buffer.concat(received));
      });
    });
    socket.on('error', () => {});
    socket.once('secureConnect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ${accept}\r\n\r\n`);
      resolve({
        collect: () => {
          socket.on('data', (c: Buffer) => {
            received.push(c);
            // a response the client's TLS layer had taken whole before the deadline is done:
            // the connection stays open for the next request, so do not wait for its end
            if (completeResponse(Buffer.concat(received))) socket.destroy();
          });
          socket.resume();
          return closed;
        },
      });
    });
    socket.once('error', reject);
  });
}

/** true when `raw` holds a complete HTTP/1.1 response (a Content-Length or a chunked body) */
function completeResponse(raw: Buffer): boolean {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const head = raw.subarray(0, end).toString('latin1');
  if (/\r\ntransfer-encoding: *chunked/i.test(head)) return raw.subarray(-7).toString('latin1') === '\r\n0\r\n\r\n';
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  return length !== null && raw.length - end - 4 >= Number(length[1]);
}

async function inflightReadOnly(kapi: KapiProcess): Promise<number> {
  const res = await kapi.http.request('GET', '/metrics', { accept: 'text/plain' });
  const m = /^apiserver_current_inflight_requests\{request_kind="readOnly"\} (\d+)/m.exec(res.body.toString());
  return Number(m?.[1] ?? NaN);
}

/** one HTTP/1.1 request on a fresh connection; whatever came back until the server closed or answered */
function rawHttp1(kapi: KapiProcess, head: string): Promise<string> {
  const creds = loadKubeconfig(kapi.kubeconfig);
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port: kapi.port,
      ALPNProtocols: ['http/1.1'],
      ca: creds.ca,
      cert: creds.cert,
      key: creds.key,
      servername: 'localhost',
    });
    let data = '';
    socket.on('error', () => {});
    socket.on('data', (c: Buffer) => {
      data += c.toString('latin1');
      if (completeResponse(Buffer.from(data, 'latin1'))) socket.destroy();
    });
    socket.once('close', () => resolve(data));
    socket.once('secureConnect', () => socket.write(head));
  });
}

describe('clients that stop reading, and large request heads', { timeout: 600_000 }, () => {
  let kapi: KapiProcess;
  const ns = uniqueName('slow');
  const listPath = `/api/v1/namespaces/${ns}/configmaps`;

  before(async () => {
    kapi = await startKapi({ extraArgs: ['--request-timeout', '3s', '--max-unread-response-mib', String(BUDGET_MIB)] });
    await createNamespace(kapi.http, ns);
    const value = 'x'.repeat(OBJECT_BYTES);
    for (let i = 0; i < OBJECTS; i++) {
      const res = await kapi.http.request('POST', listPath, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v: value } },
      });
      assert.equal(res.status, 201, res.body.toString());
    }
  });

  after(async () => {
    await kapi?.stop();
  });

  it('a list the client does not read counts as in flight until the request timeout cuts it; the replica keeps serving', async () => {
    const full = await kapi.http.request('GET', listPath);
    assert.equal(full.status, 200);
    assert.ok(full.body.length > (OBJECTS * OBJECT_BYTES) / 2);
    const clients = await Promise.all(Array.from({ length: 3 }, () => stalledClient(kapi, listPath)));
    // the three (and the scrape) are in flight at once
    await waitFor('the stalled lists in flight', async () => (await inflightReadOnly(kapi)) >= 4, 60_000);
    const ready = await kapi.http.request('GET', '/readyz');
    assert.equal(ready.status, 200);
    const one = await kapi.http.request('GET', `${listPath}/cm-0`);
    assert.equal(one.status, 200);
    // the deadline passes: nothing is in flight any more, and the clients, reading at last,
    // find their responses cut short
    await waitFor('no list in flight', async () => (await inflightReadOnly(kapi)) <= 1, 60_000);
    const received = await Promise.all(clients.map((c) => c.collect()));
    for (const raw of received) assert.ok(!completeResponse(raw), `a stalled client got its whole response (${raw.length} bytes)`);
  });

  /** `count` clients ask for the list as `accept` and never read; the replica's growth in RSS */
  async function stalledClients(accept: string, count: number): Promise<number> {
    // warm up: the list written a few times, so the baseline includes what one list costs
    for (let i = 0; i < 3; i++) assert.equal((await kapi.http.request('GET', listPath, { accept })).status, 200);
    const baseline = rssBytes(kapi.pid);
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(kapi.pid));
    }, 50);
    try {
      const clients: StalledClient[] = [];
      for (let i = 0; i < count; i++) clients.push(await stalledClient(kapi, listPath, accept));
      await waitFor('no list in flight', async () => (await inflightReadOnly(kapi)) <= 1, 60_000);
      // each connection ends: cut at the deadline, or (when the client side buffered it whole)
      // done; this test is about what the replica holds meanwhile, measured above
      await Promise.all(clients.map((c) => c.collect()));
    } finally {
      clearInterval(sampler);
    }
    assert.equal((await kapi.http.request('GET', '/readyz')).status, 200);
    return (peak - baseline) / MiB;
  }

  it('many clients that do not read a JSON list cost what their streams hold, not their lists', async () => {
    const bodies = (20 * OBJECTS * OBJECT_BYTES) / MiB;
    const grown = await stalledClients('application/json', 20);
    // each streamed list holds at most a text chunk, its bytes and the slice queued for TLS
    // (STREAMED_RESPONSE_HELD_BYTES, 0.5 MiB); the rest is the allocator's slack
    const allowed = 20 * 0.5 + 32;
    assert.ok(
      grown < allowed,
      `RSS grew by ${grown.toFixed(0)} MiB with ${bodies.toFixed(0)} MiB of unread bodies (allowed ${allowed.toFixed(0)} MiB)`,
    );
  });

  it('many clients that do not read a protobuf list cost no more than the response budget', async () => {
    // sixty-four clients: more than twice the lists the bound below allows, so a replica that
    // held every unread list could not pass
    const bodies = (64 * OBJECTS * OBJECT_BYTES) / MiB;
    const grown = await stalledClients('application/vnd.kubernetes.protobuf', 64);
    // lists built whole reserve their size first, so live response bytes stay within the
    // budget plus one list (a reservation larger than the budget is admitted alone); each build
    // decodes its items from the cache's stored bytes, and V8 collects that garbage when it
    // gets to it: on a loaded machine (the whole suite running) up to three budgets behind
    const allowed = 2 * BUDGET_MIB + (4 * OBJECTS * OBJECT_BYTES) / MiB + 96;
    assert.ok(
      grown < allowed && allowed < bodies / 2,
      `RSS grew by ${grown.toFixed(0)} MiB with ${bodies.toFixed(0)} MiB of unread bodies (allowed ${allowed.toFixed(0)} MiB)`,
    );
  });

  it("accepts request heads up to Go's limits over HTTP/1.1 and answers Go's 431 beyond them", async () => {
    const big = await rawHttp1(kapi, `GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(900 * 1024)}\r\n\r\n`);
    assert.match(big, /^HTTP\/1\.1 200 /);
    const fields = Array.from({ length: 200 }, (_, i) => `X-Field-${i}: v${i}\r\n`).join('');
    const many = await rawHttp1(kapi, `GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n${fields}\r\n`);
    assert.match(many, /^HTTP\/1\.1 200 /);
    const huge = await rawHttp1(kapi, `GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(2 * 1024 * 1024)}\r\n\r\n`);
    assert.equal(
      huge,
      'HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large',
    );
  });

  it("accepts request heads up to Go's limits over HTTP/2 and refuses a larger one", async () => {
    const creds = loadKubeconfig(kapi.kubeconfig);
    const base = { port: kapi.port, path: `${listPath}/cm-0`, ca: creds.ca, cert: creds.cert, key: creds.key };
    // 900 KB in fields of 45 KB: nghttp2's HPACK decoder refuses a single field of 64 KiB or more
    const bigFields: [string, string][] = Array.from({ length: 20 }, (_, i) => [`x-big-${i}`, 'a'.repeat(45 * 1024)]);
    assert.deepEqual(await rawHttp2Get({ ...base, headers: bigFields }), { status: 200 });
    const fields: [string, string][] = Array.from({ length: 200 }, (_, i) => [`x-field-${i}`, `v${i}`]);
    assert.deepEqual(await rawHttp2Get({ ...base, headers: fields }), { status: 200 });
    const refused = await rawHttp2Get({ ...base, headers: [['x-big', 'a'.repeat(2 * 1024 * 1024)]] });
    assert.equal(refused.status, undefined, 'a 2 MB header block was served');
    assert.equal((await kapi.http.request('GET', '/readyz')).status, 200);
  });

  it('the python client lists with a label selector longer than 16 KB', async (t) => {
    if (!(await pythonKubernetesAvailable())) return t.skip('python3-kubernetes is not installed');
    const selector = Array.from({ length: 1000 }, (_, i) => `label-${i}!=value-${i}`).join(',');
    assert.ok(selector.length > 20_000);
    const script = [
      'import sys, kubernetes',
      'kubernetes.config.load_kube_config(sys.argv[1])',
      'v1 = kubernetes.client.CoreV1Api()',
      'print(len(v1.list_namespaced_config_map(sys.argv[2], label_selector=sys.argv[3]).items))',
    ].join('\n');
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('/usr/bin/python3', ['-c', script, kapi.kubeconfig, ns, selector]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(out.code, 0, out.stderr);
    // every ConfigMap of the namespace matches (kube-root-ca.crt as well)
    const all = JSON.parse((await kapi.http.request('GET', listPath)).body.toString()) as { items: unknown[] };
    assert.equal(out.stdout.trim(), String(all.items.length));
  });
});
