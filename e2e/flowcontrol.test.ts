// API Priority and Fairness and the max-in-flight limits, end to end with kubectl 1.33 and raw
// HTTPS: the default FlowSchemas and priority levels exist, responses name the schema and
// level that classified them (admin, service account, a static-token user), and a kapi with
// tiny limits turns a request away with 429 while another is held open. A request is held
// open deterministically by sending its headers and withholding its body: the seat is taken
// before the handler waits for the body.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  jsonOf,
  kubectlOk,
  loadKubeconfig,
  startEtcd,
  startKapi,
  uniqueName,
  waitFor,
  type EtcdProcess,
  type KapiProcess,
} from './harness.js';

const G = 'flowcontrol.apiserver.k8s.io';
const JANE_TOKEN = 'flowcontrol-jane-token';
const FS_HEADER = 'x-kubernetes-pf-flowschema-uid';
const PL_HEADER = 'x-kubernetes-pf-prioritylevel-uid';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** a request with a bearer token (no client certificate) */
function open(kapi: KapiProcess, token: string, method: string, p: string, contentLength?: number) {
  const creds = loadKubeconfig(kapi.kubeconfig);
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (contentLength !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(contentLength);
  }
  const url = new URL(kapi.url);
  const req = https.request({ hostname: url.hostname, port: url.port, method, path: p, headers, ca: creds.ca, agent: false });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
  });
  req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${p}: no answer in time`)));
  return { req, answer };
}

function tokenRequest(kapi: KapiProcess, token: string, method: string, p: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const { req, answer } = open(kapi, token, method, p, payload?.length);
  req.end(payload);
  return answer;
}

/** a create whose body is withheld until `finish()`: it holds its seat until then */
function heldCreate(kapi: KapiProcess, token: string, ns: string, name: string) {
  const payload = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }));
  const { req, answer } = open(kapi, token, 'POST', `/api/v1/namespaces/${ns}/configmaps`, payload.length);
  req.flushHeaders();
  return { answer, finish: () => req.end(payload) };
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

function assertTooManyRequests(a: Answer): void {
  assert.equal(a.status, 429);
  assert.equal(a.headers['retry-after'], '1');
  assert.equal(a.body, 'Too many requests, please try again later.\n');
}

describe('API Priority and Fairness', () => {
  let kapi: KapiProcess;
  let dir: string;
  const ns = uniqueName('apf');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });
  const uidOf = async (resource: string, name: string) =>
    jsonOf<{ metadata: { uid: string } }>(await kapi.http.get(`/apis/${G}/v1/${resource}/${name}`)).metadata.uid;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-apf-'));
    writeFileSync(path.join(dir, 'tokens.csv'), `${JANE_TOKEN},jane,jane-uid,"devs"\n`);
    // 2 seats in all: every Limited level gets 1
    kapi = await startKapi({
      extraArgs: ['--token-auth-file', path.join(dir, 'tokens.csv'), '--max-requests-inflight=1', '--max-mutating-requests-inflight=1'],
    });
    await kubectlOk(['create', 'namespace', ns], admin());
  });
  after(async () => {
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl shows the default FlowSchemas and PriorityLevelConfigurations of kube 1.33', async () => {
    const schemas = await kubectlOk(['get', 'flowschemas', '-o', 'name'], admin());
    assert.deepEqual(
      schemas.trim().split('\n'),
      [
        'catch-all',
        'endpoint-controller',
        'exempt',
        'global-default',
        'kube-controller-manager',
        'kube-scheduler',
        'kube-system-service-accounts',
        'probes',
        'service-accounts',
        'system-leader-election',
        'system-node-high',
        'system-nodes',
        'workload-leader-election',
      ].map((n) => `flowschema.${G}/${n}`),
    );
    const levels = await kubectlOk(['get', 'prioritylevelconfigurations', '-o', 'name'], admin());
    assert.deepEqual(
      levels.trim().split('\n'),
      ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low'].map(
        (n) => `prioritylevelconfiguration.${G}/${n}`,
      ),
    );
    const table = await kubectlOk(['get', 'flowschemas'], admin());
    const [header, ...rows] = table.trim().split('\n');
    assert.deepEqual(header!.split(/\s+/), ['NAME', 'PRIORITYLEVEL', 'MATCHINGPRECEDENCE', 'DISTINGUISHERMETHOD', 'AGE', 'MISSINGPL']);
    const exempt = rows.find((r) => r.startsWith('exempt '))!.split(/\s+/);
    assert.deepEqual([exempt[1], exempt[2], exempt[3]], ['exempt', '1', '<none>']);
    // MISSINGPL comes from the Dangling condition every replica writes
    await waitFor('Dangling conditions', async () => {
      const t = await kubectlOk(['get', 'flowschemas', '--no-headers'], admin());
      return (
        t
          .trim()
          .split('\n')
          .every((r) => r.trim().endsWith('False')) || undefined
      );
    });
    const pl = jsonOf<{ metadata: { annotations: Record<string, string> }; spec: unknown }>(
      await kapi.http.get(`/apis/${G}/v1/prioritylevelconfigurations/workload-low`),
    );
    assert.equal(pl.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'true');
    assert.deepEqual(pl.spec, {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 100,
        limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
        lendablePercent: 90,
      },
    });
  });

  it('responses name the FlowSchema and priority level by UID', async () => {
    const res = await kapi.http.get('/api/v1/namespaces');
    assert.equal(res.status, 200);
    assert.equal(res.headers[FS_HEADER], await uidOf('flowschemas', 'exempt'));
    assert.equal(res.headers[PL_HEADER], await uidOf('prioritylevelconfigurations', 'exempt'));

    await kubectlOk(['create', 'serviceaccount', 'bot', '-n', ns], admin());
    const saToken = (await kubectlOk(['create', 'token', 'bot', '-n', ns], admin())).trim();
    const sa = await tokenRequest(kapi, saToken, 'GET', `/api/v1/namespaces/${ns}/configmaps`);
    assert.equal(sa.status, 200);
    assert.equal(sa.headers[FS_HEADER], await uidOf('flowschemas', 'service-accounts'));
    assert.equal(sa.headers[PL_HEADER], await uidOf('prioritylevelconfigurations', 'workload-low'));

    const jane = await tokenRequest(kapi, JANE_TOKEN, 'GET', `/api/v1/namespaces/${ns}/configmaps`);
    assert.equal(jane.status, 200);
    assert.equal(jane.headers[FS_HEADER], await uidOf('flowschemas', 'global-default'));
    assert.equal(jane.headers[PL_HEADER], await uidOf('prioritylevelconfigurations', 'global-default'));
  });

  it('a full Reject level answers 429 while a request is held; the exempt admin is still served', async () => {
    await kapi.http
      .post(`/apis/${G}/v1/prioritylevelconfigurations`, {
        apiVersion: `${G}/v1`,
        kind: 'PriorityLevelConfiguration',
        metadata: { name: 'e2e-tight' },
        spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } },
      })
      .then((r) => assert.equal(r.status, 201, r.body));
    await kapi.http
      .post(`/apis/${G}/v1/flowschemas`, {
        apiVersion: `${G}/v1`,
        kind: 'FlowSchema',
        metadata: { name: 'e2e-devs' },
        spec: {
          priorityLevelConfiguration: { name: 'e2e-tight' },
          matchingPrecedence: 10,
          distinguisherMethod: { type: 'ByUser' },
          rules: [
            {
              subjects: [{ kind: 'Group', group: { name: 'devs' } }],
              resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }],
            },
          ],
        },
      })
      .then((r) => assert.equal(r.status, 201, r.body));
    const fsUid = await uidOf('flowschemas', 'e2e-devs');
    const plUid = await uidOf('prioritylevelconfigurations', 'e2e-tight');
    // the server follows the new objects by watch
    await waitFor('e2e-devs classifies jane', async () => {
      const r = await tokenRequest(kapi, JANE_TOKEN, 'GET', `/api/v1/namespaces/${ns}/configmaps`);
      return r.headers[FS_HEADER] === fsUid || undefined;
    });

    const held = heldCreate(kapi, JANE_TOKEN, ns, 'held');
    // once the held create has its seat, the next request of the level is turned away
    const rejected = await waitFor('a 429', async () => {
      const r = await tokenRequest(kapi, JANE_TOKEN, 'GET', `/api/v1/namespaces/${ns}/configmaps`);
      return r.status === 429 ? r : undefined;
    });
    assertTooManyRequests(rejected);
    assert.equal(rejected.headers[FS_HEADER], fsUid);
    assert.equal(rejected.headers[PL_HEADER], plUid);
    const adminCreate = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('by-admin'));
    assert.equal(adminCreate.status, 201);

    held.finish();
    const done = await held.answer;
    assert.equal(done.status, 201, done.body);
    assert.equal(done.headers[FS_HEADER], fsUid);
    const read = await tokenRequest(kapi, JANE_TOKEN, 'GET', `/api/v1/namespaces/${ns}/configmaps/held`);
    assert.equal(read.status, 200);
  });

  it('a Queue level makes the next request wait for the held one instead', async () => {
    await kapi.http
      .post(`/apis/${G}/v1/prioritylevelconfigurations`, {
        apiVersion: `${G}/v1`,
        kind: 'PriorityLevelConfiguration',
        metadata: { name: 'e2e-queue' },
        spec: {
          type: 'Limited',
          limited: {
            nominalConcurrencyShares: 1,
            limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 50 } },
          },
        },
      })
      .then((r) => assert.equal(r.status, 201, r.body));
    await kapi.http
      .post(`/apis/${G}/v1/flowschemas`, {
        apiVersion: `${G}/v1`,
        kind: 'FlowSchema',
        metadata: { name: 'e2e-jane' },
        spec: {
          priorityLevelConfiguration: { name: 'e2e-queue' },
          matchingPrecedence: 5,
          rules: [
            {
              subjects: [{ kind: 'User', user: { name: 'jane' } }],
              resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }],
            },
          ],
        },
      })
      .then((r) => assert.equal(r.status, 201, r.body));
    const fsUid = await uidOf('flowschemas', 'e2e-jane');
    await waitFor('e2e-jane classifies jane', async () => {
      const r = await tokenRequest(kapi, JANE_TOKEN, 'GET', `/api/v1/namespaces/${ns}/configmaps`);
      return r.headers[FS_HEADER] === fsUid || undefined;
    });
    // Each round holds a create and reads the object it is creating. A read served before
    // the create took the seat finds nothing (404): another round. A read that finds the
    // object (200) can only have waited in the queue until the held create was done.
    let round = 0;
    const proof = await waitFor(
      'a read that waited for the held create',
      async () => {
        const name = `queued-${round++}`;
        const held = heldCreate(kapi, JANE_TOKEN, ns, name);
        const read = tokenRequest(kapi, JANE_TOKEN, 'GET', `/api/v1/namespaces/${ns}/configmaps/${name}`);
        // only decides when to let the create go on; the outcome is checked below
        await Promise.race([read, new Promise((r) => setTimeout(r, 1000))]);
        held.finish();
        assert.equal((await held.answer).status, 201);
        const answer = await read;
        assert.notEqual(answer.status, 429);
        return answer.status === 200 ? answer : undefined;
      },
      60_000,
    );
    assert.equal(proof.headers[FS_HEADER], fsUid);
  });
});

describe('--enable-priority-and-fairness=false: the classic max-in-flight limits', () => {
  let kapi: KapiProcess;
  let dir: string;
  const ns = uniqueName('maxinflight');

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-maxinflight-'));
    writeFileSync(path.join(dir, 'tokens.csv'), `${JANE_TOKEN},jane,jane-uid,"devs"\n`);
    kapi = await startKapi({
      extraArgs: [
        '--token-auth-file',
        path.join(dir, 'tokens.csv'),
        '--enable-priority-and-fairness=false',
        '--max-mutating-requests-inflight=1',
      ],
    });
    await kubectlOk(['create', 'namespace', ns], { kubeconfig: kapi.kubeconfig });
  });
  after(async () => {
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a second mutating request gets 429 while one is held; reads and system:masters are served', async () => {
    const first = await tokenRequest(kapi, JANE_TOKEN, 'GET', `/api/v1/namespaces/${ns}/configmaps`);
    assert.equal(first.status, 200);
    assert.equal(first.headers[FS_HEADER], undefined);
    const held = heldCreate(kapi, JANE_TOKEN, ns, 'held');
    let n = 0;
    const rejected = await waitFor('a 429', async () => {
      const r = await tokenRequest(kapi, JANE_TOKEN, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(`probe-${n++}`));
      return r.status === 429 ? r : undefined;
    });
    assertTooManyRequests(rejected);
    assert.equal((await tokenRequest(kapi, JANE_TOKEN, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status, 200);
    assert.equal((await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('by-admin'))).status, 201);
    held.finish();
    assert.equal((await held.answer).status, 201);
    assert.equal((await tokenRequest(kapi, JANE_TOKEN, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('after'))).status, 201);
  });
});

describe('two replicas on one etcd', () => {
  let etcd: EtcdProcess;
  let a: KapiProcess;
  let b: KapiProcess;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-apf-replicas-'));
    writeFileSync(path.join(dir, 'tokens.csv'), `${JANE_TOKEN},jane,jane-uid,"devs"\n`);
    etcd = await startEtcd();
    // both start at once: both put the bootstrap configuration in place
    [a, b] = await Promise.all(
      [0, 1].map(() => startKapi({ etcdServers: etcd.endpoint, extraArgs: ['--token-auth-file', path.join(dir, 'tokens.csv')] })),
    );
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the objects exist once, and a FlowSchema made through one replica classifies on the other', async () => {
    const names = (r: Parameters<typeof jsonOf>[0]) =>
      jsonOf<{ items: Array<{ metadata: { name: string } }> }>(r).items.map((i) => i.metadata.name);
    assert.equal(names(await b.http.get(`/apis/${G}/v1/flowschemas`)).length, 13);
    assert.equal(names(await b.http.get(`/apis/${G}/v1/prioritylevelconfigurations`)).length, 8);
    const created = await a.http.post(`/apis/${G}/v1/flowschemas`, {
      apiVersion: `${G}/v1`,
      kind: 'FlowSchema',
      metadata: { name: 'e2e-jane' },
      spec: {
        priorityLevelConfiguration: { name: 'workload-high' },
        matchingPrecedence: 5,
        rules: [{ subjects: [{ kind: 'User', user: { name: 'jane' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }],
      },
    });
    assert.equal(created.status, 201, created.body);
    const uid = jsonOf<{ metadata: { uid: string } }>(created).metadata.uid;
    const plUid = jsonOf<{ metadata: { uid: string } }>(await b.http.get(`/apis/${G}/v1/prioritylevelconfigurations/workload-high`))
      .metadata.uid;
    const seen = await waitFor('replica b to classify jane by e2e-jane', async () => {
      const r = await tokenRequest(b, JANE_TOKEN, 'GET', '/version');
      return r.headers[FS_HEADER] === uid ? r : undefined;
    });
    assert.equal(seen.headers[PL_HEADER], plUid);
    // and back to global-default once it is deleted through the other replica
    assert.equal((await a.http.delete(`/apis/${G}/v1/flowschemas/e2e-jane`)).status, 200);
    const globalDefault = jsonOf<{ metadata: { uid: string } }>(await b.http.get(`/apis/${G}/v1/flowschemas/global-default`)).metadata.uid;
    await waitFor(
      'replica b to drop e2e-jane',
      async () => (await tokenRequest(b, JANE_TOKEN, 'GET', '/version')).headers[FS_HEADER] === globalDefault || undefined,
    );
  });
});
