// Issue 8's reproductions, one test each, against a real replica with RBAC and a user who may
// only use ConfigMaps and Secrets in one namespace: requests that once killed the process, a
// path that reached another object, option errors that were 400 instead of kube's 422, clients
// that never read, and header sizes kube accepts.

import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { createConfigMap, createNamespace, sleep } from './harness.js';
import { deepText } from './fuzz/json-text.js';
import { healthProblems, LIMITED_TOKEN, rssMiB, snapshotSentinels, startFuzzReplica, type FuzzReplica } from './fuzz/replica.js';
import type { FuzzRequest, FuzzResponse } from './fuzz/request.js';
import { isTransportError } from './fuzz/request.js';
import { FuzzTransport } from './fuzz/transport.js';

/** short, so that a response a client never reads is cut within the test */
// long enough for the three 2.5 MB YAML bodies below, decoded one after another (on the YAML
// thread; then each is checked and encoded on the event loop): on a slow 2-core machine the last
// one's answer took 15-20 s
const REQUEST_TIMEOUT_SECONDS = 30;
/** resident memory the replica may reach while 20 clients hold a 10 MB list unread */
const SLOW_READER_RSS_BOUND_MIB = 600;
/** resident memory the replica may reach while it decodes three 2.5 MB YAML bodies at once
 *  (the YAML parser's nodes take some 40 bytes per byte while it parses; V8 collects them lazily) */
const YAML_RSS_BOUND_MIB = 1024;

describe('issue 8: hostile input must never take a replica down or reach another object', () => {
  let replica: FuzzReplica | undefined;
  let transport: FuzzTransport;

  const ready = (): FuzzReplica => {
    if (!replica) throw new Error('no replica');
    return replica;
  };
  const ns = (): string => ready().targets.namespace;
  const send = async (
    req: Omit<FuzzRequest, 'kind' | 'protocol' | 'headers'> & Partial<Pick<FuzzRequest, 'protocol' | 'headers'>>,
  ): Promise<FuzzResponse> => {
    const outcome = await transport.send({ kind: 'regression', protocol: 'http/1.1', headers: { accept: 'application/json' }, ...req });
    if (isTransportError(outcome)) throw new Error(`${req.method} ${req.path}: no answer (${outcome.error})`);
    return outcome;
  };
  const statusOf = (res: FuzzResponse): { code?: number; reason?: string; message?: string } => {
    try {
      return JSON.parse(res.body.toString('utf8')) as { code?: number; reason?: string; message?: string };
    } catch {
      return {};
    }
  };
  const assertStatus = (res: FuzzResponse, code: number, reason: string, what: string): void => {
    const s = statusOf(res);
    assert.equal(res.status, code, `${what}: ${res.status} ${res.body.subarray(0, 400).toString()}`);
    assert.equal(s.reason, reason, `${what}: ${res.body.subarray(0, 400).toString()}`);
  };
  const assert4xx = (res: FuzzResponse, what: string): void => {
    assert.ok(res.status >= 400 && res.status < 500, `${what}: ${res.status} ${res.body.subarray(0, 400).toString()}`);
    assert.equal(statusOf(res).code, res.status, `${what}: not a Status: ${res.body.subarray(0, 400).toString()}`);
  };
  const assertWell = async (): Promise<void> => {
    assert.deepEqual(await healthProblems(ready()), []);
  };
  const targetVersion = async (): Promise<string> => {
    const res = await ready().kapi.http.get(`/api/v1/namespaces/${ns()}/configmaps/${ready().targets.target}`);
    assert.equal(res.status, 200, res.body);
    return (JSON.parse(res.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  };

  before(async () => {
    replica = await startFuzzReplica([`--request-timeout=${REQUEST_TIMEOUT_SECONDS}s`]);
    transport = new FuzzTransport({ admin: replica.admin, limitedToken: LIMITED_TOKEN });
  });
  // a reproduction that kills the replica must not fail the tests after it for that reason
  beforeEach(async () => {
    if (replica && (await healthProblems(replica)).length === 0) return;
    transport?.close();
    await replica?.kapi.kill();
    await replica?.stop();
    replica = await startFuzzReplica([`--request-timeout=${REQUEST_TIMEOUT_SECONDS}s`]);
    transport = new FuzzTransport({ admin: replica.admin, limitedToken: LIMITED_TOKEN });
  });
  after(async () => {
    transport?.close();
    await replica?.stop();
  });

  it('a JSON patch of 30 copies of the annotations is 422 Invalid, leaves the object as it was, and the replica lives', async () => {
    const before = await targetVersion();
    const ops: unknown[] = [{ op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(1000) } }];
    for (let i = 0; i < 30; i++) ops.push({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/a${i}` });
    const res = await send({
      caller: 'limited',
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns()}/configmaps/${ready().targets.target}`,
      headers: { accept: 'application/json', 'content-type': 'application/json-patch+json' },
      body: Buffer.from(JSON.stringify(ops)),
    });
    assertStatus(res, 422, 'Invalid', '30-copy JSON patch');
    await assertWell();
    assert.equal(await targetVersion(), before);
  });

  it('3000-deep YAML to selfsubjectaccessreviews, sent twice, is a 4xx both times and the replica lives', async () => {
    const body = Buffer.from(`${'['.repeat(3000)}${']'.repeat(3000)}\n`);
    for (const attempt of [1, 2]) {
      const res = await send({
        caller: 'limited',
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        headers: { accept: 'application/json', 'content-type': 'application/yaml' },
        body,
      });
      assert4xx(res, `attempt ${attempt}`);
      await assertWell();
    }
  });

  it('4000-deep JSON sent as application/apply-patch+yaml is a 4xx and the replica lives', async () => {
    const res = await send({
      caller: 'limited',
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns()}/configmaps/${ready().targets.target}?fieldManager=deep`,
      headers: { accept: 'application/json', 'content-type': 'application/apply-patch+yaml' },
      body: Buffer.from(deepText(4000, 'array')),
    });
    assert4xx(res, 'deep apply patch');
    await assertWell();
  });

  for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
    it(`a 9000-deep ${type} patch is a 4xx`, async () => {
      const res = await send({
        caller: 'limited',
        method: 'PATCH',
        path: `/api/v1/namespaces/${ns()}/configmaps/${ready().targets.target}`,
        headers: { accept: 'application/json', 'content-type': type },
        body: Buffer.from(`{"metadata":${deepText(9000, 'object')}}`),
      });
      assert4xx(res, type);
      await assertWell();
    });
  }

  it('DELETE .../configmaps/.. (and ., %2e%2e, \\) with dryRun=All is refused and deletes nothing', async () => {
    const t = ready().targets;
    const sentinels = await snapshotSentinels(ready().kapi, t);
    for (const segment of ['..', '.', '%2e%2e', '%2E%2E', '%2e', '\\', '..%2f', '%2f..']) {
      for (const caller of ['admin', 'limited'] as const) {
        const res = await send({ caller, method: 'DELETE', path: `/api/v1/namespaces/${t.namespace}/configmaps/${segment}?dryRun=All` });
        assert4xx(res, `DELETE configmaps/${segment} as ${caller}`);
        if (segment === '..' || segment === '.' || /^%2e(%2e)?$/i.test(segment))
          assertStatus(res, 400, 'BadRequest', `DELETE configmaps/${segment} as ${caller}`);
      }
      const res = await send({ caller: 'admin', method: 'DELETE', path: `/api/v1/namespaces/${t.namespace}/configmaps/${segment}` });
      assert4xx(res, `DELETE configmaps/${segment} without a dry run`);
    }
    assert.deepEqual(await snapshotSentinels(ready().kapi, t), sentinels);
  });

  it('GET .../configmaps/. is not the collection, and /namespaces/../secrets is not every Secret', async () => {
    const t = ready().targets;
    const dot = await send({ caller: 'limited', method: 'GET', path: `/api/v1/namespaces/${t.namespace}/configmaps/.` });
    assertStatus(dot, 400, 'BadRequest', 'GET configmaps/.');
    const up = await send({ caller: 'admin', method: 'GET', path: '/api/v1/namespaces/../secrets' });
    if (up.status === 200) {
      // kube reads '..' as a (nonexistent) namespace's name: nothing from another namespace
      const items = (JSON.parse(up.body.toString()) as { items: { metadata: { namespace: string } }[] }).items;
      assert.deepEqual(
        items.map((i) => i.metadata.namespace).filter((n) => n !== '..'),
        [],
      );
    } else {
      assertStatus(up, 400, 'BadRequest', 'GET /namespaces/../secrets');
    }
  });

  const invalidOptions: {
    what: string;
    method: string;
    path: (ns: string, name: string) => string;
    body?: string;
    contentType?: string;
  }[] = [
    {
      what: 'dryRun=bogus on create',
      method: 'POST',
      path: (n) => `/api/v1/namespaces/${n}/configmaps?dryRun=bogus`,
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry-bogus"}}',
    },
    {
      what: 'fieldValidation=bogus on create',
      method: 'POST',
      path: (n) => `/api/v1/namespaces/${n}/configmaps?fieldValidation=bogus`,
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv-bogus"}}',
    },
    {
      what: 'propagationPolicy=bogus on delete',
      method: 'DELETE',
      path: (n, name) => `/api/v1/namespaces/${n}/configmaps/${name}?propagationPolicy=bogus&dryRun=All`,
    },
    {
      what: 'a 129-character fieldManager',
      method: 'POST',
      path: (n) => `/api/v1/namespaces/${n}/configmaps?fieldManager=${'m'.repeat(129)}`,
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fm-long"}}',
    },
    {
      what: 'a fieldManager with a control character',
      method: 'POST',
      path: (n) => `/api/v1/namespaces/${n}/configmaps?fieldManager=a%01b`,
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fm-ctl"}}',
    },
    {
      what: 'apply without a fieldManager',
      method: 'PATCH',
      path: (n, name) => `/api/v1/namespaces/${n}/configmaps/${name}`,
      body: undefined,
      contentType: 'application/apply-patch+yaml',
    },
    {
      what: 'a watch with resourceVersionMatch=Exact',
      method: 'GET',
      path: (n) => `/api/v1/namespaces/${n}/configmaps?watch=true&resourceVersion=1&resourceVersionMatch=Exact&timeoutSeconds=1`,
    },
    {
      what: 'resourceVersionMatch=Exact without a resourceVersion',
      method: 'GET',
      path: (n) => `/api/v1/namespaces/${n}/configmaps?resourceVersionMatch=Exact`,
    },
    { what: 'sendInitialEvents on a list', method: 'GET', path: (n) => `/api/v1/namespaces/${n}/configmaps?sendInitialEvents=true` },
  ];
  for (const c of invalidOptions) {
    it(`${c.what} is 422 Invalid`, async () => {
      const t = ready().targets;
      // an apply body names the object it applies to
      const patchBody =
        c.contentType === 'application/apply-patch+yaml'
          ? `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${t.target}"}}`
          : c.body;
      const res = await send({
        caller: 'limited',
        method: c.method,
        path: c.path(t.namespace, t.target),
        headers: { accept: 'application/json', ...(patchBody ? { 'content-type': c.contentType ?? 'application/json' } : {}) },
        body: patchBody === undefined ? undefined : Buffer.from(patchBody),
      });
      assertStatus(res, 422, 'Invalid', c.what);
    });
  }

  it('metadata members sent as null are dropped, as Go decodes them, and label selectors keep working', async () => {
    const t = ready().targets;
    const name = `null-labels-${Date.now()}`;
    const created = await send({
      caller: 'limited',
      method: 'POST',
      path: `/api/v1/namespaces/${t.namespace}/configmaps`,
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ metadata: { name, labels: null, annotations: null, finalizers: null } })),
    });
    assert.equal(created.status, 201, created.body.toString());
    const meta = (JSON.parse(created.body.toString()) as { metadata: Record<string, unknown> }).metadata;
    assert.equal('labels' in meta || 'annotations' in meta || 'finalizers' in meta, false, JSON.stringify(meta));
    const listed = await send({
      caller: 'limited',
      method: 'GET',
      path: `/api/v1/namespaces/${t.namespace}/configmaps?labelSelector=${encodeURIComponent('a/b in (v0,v1)')}`,
    });
    assert.equal(listed.status, 200, listed.body.toString());
    await assertWell();
  });

  it('an unknown HTTP method is 405 MethodNotAllowed with a Status, not a bare parser error', async () => {
    const t = ready().targets;
    const res = await send({ caller: 'admin', method: 'FOO', path: `/api/v1/namespaces/${t.namespace}/configmaps/${t.target}` });
    assertStatus(res, 405, 'MethodNotAllowed', 'FOO');
    await assertWell();
  });

  it('20 clients that never read a 10 MB list leave memory bounded and are cut at --request-timeout', { timeout: 5 * 60_000 }, async () => {
    const r = ready();
    const bulk = `${r.targets.namespace}-bulk`;
    await createNamespace(r.kapi.http, bulk);
    for (let i = 0; i < 10; i++) await createConfigMap(r.kapi.http, bulk, `big-${i}`, { v: 'x'.repeat(1_000_000) });
    const full = (await r.kapi.http.get(`/api/v1/namespaces/${bulk}/configmaps`, { timeoutMs: 60_000 })).body.length;
    const url = new URL(r.admin.server);
    const sockets = Array.from({ length: 20 }, () => {
      const socket = tls.connect({
        host: url.hostname,
        port: Number(url.port),
        ca: r.admin.ca,
        cert: r.admin.cert,
        key: r.admin.key,
        ALPNProtocols: ['http/1.1'],
      });
      socket.on('error', () => {});
      socket.write(`GET /api/v1/namespaces/${bulk}/configmaps HTTP/1.1\r\nHost: ${url.host}\r\nAccept: application/json\r\n\r\n`);
      socket.pause();
      return socket;
    });
    try {
      let peak = 0;
      // hold them unread past the request timeout, watching the replica's memory
      for (let waited = 0; waited < (REQUEST_TIMEOUT_SECONDS + 15) * 1000; waited += 1000) {
        peak = Math.max(peak, rssMiB(r.kapi.pid) ?? 0);
        await sleep(1000);
      }
      assert.ok(peak < SLOW_READER_RSS_BOUND_MIB, `peak RSS ${Math.round(peak)} MiB while 20 clients held a ${full}-byte list unread`);
      const received = await Promise.all(
        sockets.map(
          (s) =>
            new Promise<number>((resolve) => {
              let n = 0;
              const done = (): void => resolve(n);
              s.on('data', (c: Buffer) => (n += c.length));
              s.on('end', done);
              s.on('close', done);
              s.setTimeout(30_000, () => {
                s.destroy();
                done();
              });
              s.resume();
            }),
        ),
      );
      for (const n of received)
        assert.ok(n < full, `a client that did not read got the whole list (${n} of ${full} bytes) after --request-timeout`);
      await assertWell();
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('large YAML bodies are parsed once, up to their first document, with memory bounded', { timeout: 3 * 60_000 }, async () => {
    const r = ready();
    const t = r.targets;
    // 2.5 MB of keys in descending order (each out of order for a sorted set), one repeated;
    // then a second document the YAML parser cannot read (go-yaml never looks at it)
    const keys = Array.from({ length: 120_000 }, (_v, i) => `  key${String(120_000 - i).padStart(6, '0')}: v${i}`);
    const yaml = (name: string): Buffer =>
      Buffer.from(
        [
          'apiVersion: v1',
          'kind: ConfigMap',
          'metadata:',
          `  name: ${name}`,
          'data:',
          ...keys,
          '  key000007: again',
          '---',
          `${'{['.repeat(100)}`,
          '',
        ].join('\n'),
      );
    const repeatLine = keys.length + 6;
    let peak = rssMiB(r.kapi.pid) ?? 0;
    let sending = true;
    const sampling = (async () => {
      while (sending) {
        peak = Math.max(peak, rssMiB(r.kapi.pid) ?? 0);
        await sleep(100);
      }
    })();
    // the YAML thread decodes the bodies: the event loop answers other requests meanwhile
    let decoding = true;
    let answeredMeanwhile = 0;
    const otherRequests = (async () => {
      while (decoding) {
        const res = await r.kapi.http.get(`/api/v1/namespaces/${t.namespace}`);
        assert.equal(res.status, 200, res.body);
        if (decoding) answeredMeanwhile++;
      }
    })();
    try {
      const creating = Promise.all(
        [0, 1, 2].map((i) =>
          send({
            caller: 'limited',
            method: 'POST',
            path: `/api/v1/namespaces/${t.namespace}/configmaps?dryRun=All&fieldValidation=Warn`,
            headers: { accept: 'application/json', 'content-type': 'application/yaml' },
            body: yaml(`big-yaml-${i}`),
          }),
        ),
      );
      const created = await creating.finally(() => {
        decoding = false;
      });
      await otherRequests;
      // on the event loop the three parses were one stretch each, with a request or two between
      assert.ok(answeredMeanwhile >= 100, `${answeredMeanwhile} other requests answered while three large YAML bodies were decoded`);
      for (const res of created) {
        assert.equal(res.status, 201, res.body.subarray(0, 300).toString());
        // the answer is longer than the transport reads; what it read (managedFields first) has
        // the data's first keys
        assert.match(res.body.toString('utf8'), /"data":\{"key120000":"v0","key119999":"v1",/);
        assert.equal(res.headers.warning, `299 - "line ${repeatLine}: key \\"key000007\\" already set in map"`);
      }
      const applied = await send({
        caller: 'limited',
        method: 'PATCH',
        path: `/api/v1/namespaces/${t.namespace}/configmaps/big-yaml-apply?dryRun=All&fieldManager=fuzz&fieldValidation=Strict`,
        headers: { accept: 'application/json', 'content-type': 'application/apply-patch+yaml' },
        body: yaml('big-yaml-apply'),
      });
      assertStatus(applied, 400, 'BadRequest', 'apply with a repeated key');
      assert.match(
        statusOf(applied).message ?? '',
        new RegExp(`error strict decoding YAML: .*line ${repeatLine}: key "key000007" already set in map`, 's'),
      );
    } finally {
      sending = false;
      decoding = false;
      await sampling;
      await otherRequests.catch(() => undefined);
    }
    assert.ok(peak < YAML_RSS_BOUND_MIB, `peak RSS ${Math.round(peak)} MiB while decoding three 2.5 MB YAML bodies`);
    await assertWell();
  });

  it("a YAML body repeating one key 100,000 times gets kube-apiserver's bounded warnings, at once", async () => {
    const t = ready().targets;
    const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: repeats', 'data:'];
    for (let i = 0; i < 100_000; i++) lines.push(`  a: v${i}`);
    const res = await send({
      caller: 'limited',
      method: 'POST',
      path: `/api/v1/namespaces/${t.namespace}/configmaps?dryRun=All&fieldValidation=Warn`,
      headers: { accept: 'application/json', 'content-type': 'application/yaml' },
      body: Buffer.from(lines.join('\n')),
    });
    assert.equal(res.status, 201, res.body.subarray(0, 300).toString());
    assert.match(res.body.toString('utf8'), /"data":\{"a":"v99999"\}/);
    // the transport joins the Warning headers with commas
    const header = ([] as string[]).concat(res.headers.warning ?? []).join(', ');
    assert.ok(header.startsWith('299 - "line 7: key \\"a\\" already set in map", 299 - "line 8: '), header.slice(0, 200));
    // kube's recorder: about 4096 characters of warning text, then no more
    const count = header.split('299 - "line ').length - 1;
    assert.ok(count > 50 && header.length < 8192, `${count} warnings, ${header.length} characters`);
    await assertWell();
  });

  it('strategic merge patches of 20,000 list items, reordered and deleted, are answered (not cut at the request timeout)', async () => {
    const t = ready().targets;
    const n = 20_000;
    const env = Array.from({ length: n }, (_v, i) => ({ name: `E${i}`, value: 'v' }));
    const path = `/apis/apps/v1/namespaces/${t.namespace}/deployments`;
    const created = await send({
      caller: 'admin',
      method: 'POST',
      path,
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: Buffer.from(
        JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'many-env' },
          spec: {
            selector: { matchLabels: { app: 'many-env' } },
            template: { metadata: { labels: { app: 'many-env' } }, spec: { containers: [{ name: 'c', image: 'i', env }] } },
          },
        }),
      ),
    });
    assert.equal(created.status, 201, created.body.subarray(0, 300).toString());
    const patch = async (containers: unknown[], extra: Record<string, unknown> = {}): Promise<{ name: string; value?: string }[]> => {
      const res = await send({
        caller: 'admin',
        method: 'PATCH',
        path: `${path}/many-env?dryRun=All`,
        headers: { accept: 'application/json', 'content-type': 'application/strategic-merge-patch+json' },
        body: Buffer.from(JSON.stringify({ spec: { template: { spec: { containers, ...extra } } } })),
      });
      assert.equal(res.status, 200, res.body.subarray(0, 300).toString());
      const d = JSON.parse(res.body.toString('utf8')) as {
        spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
      };
      return d.spec.template.spec.containers[0]?.env ?? [];
    };
    const reversed = await patch([{ name: 'c', env: env.map((_e, i) => ({ name: `E${n - 1 - i}`, value: 'w' })) }]);
    assert.equal(reversed.length, n);
    assert.deepEqual(reversed[0], { name: `E${n - 1}`, value: 'w' });
    const deleted = await patch([{ name: 'c', env: env.slice(1).map((e) => ({ name: e.name, $patch: 'delete' })) }]);
    assert.deepEqual(deleted, [{ name: 'E0', value: 'v' }]);
    const ordered = await patch([{ name: 'c', '$setElementOrder/env': env.map((_e, i) => ({ name: `E${n - 1 - i}` })) }], {
      '$setElementOrder/containers': [{ name: 'c' }],
    });
    assert.deepEqual(ordered.slice(0, 2), [
      { name: `E${n - 1}`, value: 'v' },
      { name: `E${n - 2}`, value: 'v' },
    ]);
    await assertWell();
  });

  it('more than 16 KB of headers over HTTP/1.1 is accepted (kube accepts up to 1 MiB)', async () => {
    const t = ready().targets;
    const selector = `app notin (${Array.from({ length: 2500 }, (_v, i) => `v${i}`).join(',')})`;
    const viaQuery = await send({
      caller: 'limited',
      method: 'GET',
      path: `/api/v1/namespaces/${t.namespace}/configmaps?labelSelector=${encodeURIComponent(selector)}`,
    });
    assert.equal(viaQuery.status, 200, viaQuery.body.subarray(0, 300).toString());
    const viaHeader = await send({
      caller: 'limited',
      method: 'GET',
      path: `/api/v1/namespaces/${t.namespace}/configmaps/${t.target}`,
      headers: { accept: 'application/json', 'x-large': 'a'.repeat(100 * 1024) },
    });
    assert.equal(viaHeader.status, 200, viaHeader.body.subarray(0, 300).toString());
  });

  it('128 and more header fields over HTTP/2 are accepted', async () => {
    const t = ready().targets;
    for (const count of [128, 300]) {
      const headers: Record<string, string> = { accept: 'application/json' };
      for (let i = 0; i < count; i++) headers[`x-field-${i}`] = `v${i}`;
      const res = await send({
        caller: 'limited',
        protocol: 'h2',
        method: 'GET',
        path: `/api/v1/namespaces/${t.namespace}/configmaps/${t.target}`,
        headers,
      });
      assert.equal(res.status, 200, `${count} fields: ${res.body.subarray(0, 300).toString()}`);
    }
  });
});
