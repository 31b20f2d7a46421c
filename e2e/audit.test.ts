// Auditing end to end: kapi with a policy (ConfigMaps at RequestResponse, Secrets at Metadata,
// `get /livez` dropped, the rest at Metadata), a log file and a webhook on a loopback HTTPS
// server with its own CA and a client certificate; kubectl 1.33 drives it. Every check reads
// the events kapi wrote: stages, levels, objectRef, responseStatus, bodies, Audit-Id.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { kubectl, kubectlOk, kubectlSpawn, startKapi, uniqueName, waitFor, writeKubeconfig, type KapiProcess } from './harness.js';

type AuditEvent = {
  kind: string;
  apiVersion: string;
  level: string;
  auditID: string;
  stage: string;
  requestURI: string;
  verb: string;
  user: { username?: string; groups?: string[] };
  impersonatedUser?: { username?: string };
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: Record<string, string>;
  responseStatus?: { metadata: object; code?: number; status?: string; reason?: string; message?: string };
  requestObject?: Record<string, unknown>;
  responseObject?: Record<string, unknown>;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
};

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  verbs: ["get"]
  nonResourceURLs: ["/livez*"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets"]
- level: Metadata
`;

// kube-apiserver's Event field order (omitted fields aside)
const FIELD_ORDER = [
  'kind',
  'apiVersion',
  'level',
  'auditID',
  'stage',
  'requestURI',
  'verb',
  'user',
  'impersonatedUser',
  'sourceIPs',
  'userAgent',
  'objectRef',
  'responseStatus',
  'requestObject',
  'responseObject',
  'requestReceivedTimestamp',
  'stageTimestamp',
  'annotations',
];
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const SECRET_VALUE = 'sup3r-s3cret-audit-value';

let dir: string;
let kapi: KapiProcess;
let sink: https.Server;
const batches: { clientCN: string; body: { kind: string; apiVersion: string; items: AuditEvent[] }; raw: string }[] = [];
let logPath: string;

function logEvents(): AuditEvent[] {
  if (!existsSync(logPath)) return [];
  const text = readFileSync(logPath, 'utf8');
  // a line still being written has no newline yet
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}

function webhookEvents(): AuditEvent[] {
  return batches.flatMap((b) => b.body.items);
}

/** the events of one request, once its final stage has arrived */
async function eventsOf(
  where: () => AuditEvent[],
  match: (e: AuditEvent) => boolean,
  finalStage = 'ResponseComplete',
): Promise<AuditEvent[]> {
  return waitFor(
    `audit events (${finalStage})`,
    () => {
      const all = where();
      const final = all.find((e) => match(e) && e.stage === finalStage);
      return final ? all.filter((e) => e.auditID === final.auditID) : undefined;
    },
    30_000,
    100,
  );
}

function stage(events: AuditEvent[], name: string): AuditEvent {
  const e = events.find((x) => x.stage === name);
  assert.ok(e, `no ${name} event among ${events.map((x) => x.stage).join(',')}`);
  return e;
}

function assertShape(e: AuditEvent): void {
  assert.equal(e.kind, 'Event');
  assert.equal(e.apiVersion, 'audit.k8s.io/v1');
  const keys = Object.keys(e);
  assert.deepEqual(
    keys,
    FIELD_ORDER.filter((k) => keys.includes(k)),
    'fields in kube-apiserver order',
  );
  assert.match(e.requestReceivedTimestamp, MICRO_TIME);
  assert.match(e.stageTimestamp, MICRO_TIME);
  assert.deepEqual(e.sourceIPs, ['127.0.0.1']);
}

const kc = () => ({ kubeconfig: kapi.kubeconfig });
const isCreate = (resource: string, name: string) => (e: AuditEvent) =>
  e.verb === 'create' && e.objectRef?.resource === resource && e.objectRef?.name === name;
const isVerb = (verb: string, resource: string, name: string) => (e: AuditEvent) =>
  e.verb === verb && e.objectRef?.resource === resource && e.objectRef?.name === name;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-audit-'));
  // the webhook's own PKI: a CA, its serving certificate, and kapi's client certificate
  const ca = await createCA('audit-sink-ca', 1, await generateKey('ecdsa'));
  const serverKey = await generateKey('ecdsa');
  const serverCert = await issueCert(ca, { commonName: 'audit-sink', sans: ['127.0.0.1'], usage: 'server', validDays: 1 }, serverKey);
  const clientKey = await generateKey('ecdsa');
  const clientCert = await issueCert(ca, { commonName: 'kapi-audit', usage: 'client', validDays: 1 }, clientKey);
  sink = https.createServer(
    { key: serverKey.privateKeyPem, cert: serverCert, ca: ca.certPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const clientCN = (req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '';
        batches.push({ clientCN: String(clientCN), body: JSON.parse(raw) as (typeof batches)[number]['body'], raw });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    },
  );
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const webhookConfig = path.join(dir, 'webhook.kubeconfig');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  writeFileSync(
    webhookConfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'sink',
          cluster: {
            server: `https://127.0.0.1:${(sink.address() as AddressInfo).port}/audit`,
            'certificate-authority-data': b64(ca.certPem),
          },
        },
      ],
      users: [{ name: 'kapi', user: { 'client-certificate-data': b64(clientCert), 'client-key-data': b64(clientKey.privateKeyPem) } }],
      contexts: [{ name: 'sink', context: { cluster: 'sink', user: 'kapi' } }],
      'current-context': 'sink',
    }),
  );
  const policy = path.join(dir, 'policy.yaml');
  writeFileSync(policy, POLICY);
  logPath = path.join(dir, 'log', 'audit.log');
  kapi = await startKapi({
    extraArgs: [
      '--authorization-mode',
      'RBAC',
      '--audit-policy-file',
      policy,
      '--audit-log-path',
      logPath,
      '--audit-webhook-config-file',
      webhookConfig,
      '--audit-webhook-batch-max-wait',
      '1s',
      '--audit-webhook-initial-backoff',
      '200ms',
    ],
  });
});

after(async () => {
  await kapi?.stop();
  sink?.closeAllConnections();
  await new Promise<void>((resolve) => (sink ? sink.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

test('ConfigMaps at RequestResponse: create, get (Audit-Id header = auditID), delete', async () => {
  const name = uniqueName('audit-cm');
  await kubectlOk(['create', 'configmap', name, '--from-literal=greeting=hello'], kc());
  const created = await eventsOf(logEvents, isCreate('configmaps', name));
  const received = stage(created, 'RequestReceived');
  const complete = stage(created, 'ResponseComplete');
  assert.equal(created.length, 2, 'no ResponseStarted for a short request');
  for (const e of created) assertShape(e);
  assert.equal(complete.level, 'RequestResponse');
  assert.equal(received.stageTimestamp, received.requestReceivedTimestamp);
  assert.equal(complete.user.username, 'kubernetes-admin');
  assert.deepEqual(complete.objectRef, { resource: 'configmaps', namespace: 'default', name, apiVersion: 'v1' });
  assert.deepEqual(complete.responseStatus, { metadata: {}, code: 201 });
  assert.deepEqual((complete.requestObject as { data: unknown }).data, { greeting: 'hello' });
  assert.equal((complete.responseObject as { metadata: { name: string } }).metadata.name, name);
  assert.match(String((complete.responseObject as { metadata: { uid: string } }).metadata.uid), /^[0-9a-f-]{36}$/);
  assert.equal(complete.annotations?.['authorization.k8s.io/decision'], 'allow');
  assert.ok('authorization.k8s.io/reason' in (complete.annotations ?? {}));
  assert.equal(received.responseStatus, undefined);

  const got = await kubectl(['get', 'configmap', name, '-o', 'json', '-v=8'], kc());
  assert.equal(got.code, 0, got.stderr);
  // the header of the response to the GET of the object (discovery requests come first)
  const afterRequest = got.stderr.slice(got.stderr.lastIndexOf(`/configmaps/${name}`));
  const auditId = /Audit-Id: ([0-9a-f-]{36})/i.exec(afterRequest)?.[1];
  assert.ok(auditId, 'kubectl -v=8 shows the Audit-Id response header');
  const get = await eventsOf(logEvents, (e) => e.auditID === auditId);
  const getDone = stage(get, 'ResponseComplete');
  assert.equal(getDone.verb, 'get');
  assert.equal(getDone.objectRef?.name, name);
  assert.deepEqual(getDone.responseStatus, { metadata: {}, code: 200 });
  assert.equal(getDone.requestObject, undefined);
  assert.deepEqual((getDone.responseObject as { data: unknown }).data, { greeting: 'hello' });

  const missing = await kubectl(['get', 'configmap', `${name}-missing`], kc());
  assert.notEqual(missing.code, 0);
  const notFound = stage(await eventsOf(logEvents, isVerb('get', 'configmaps', `${name}-missing`)), 'ResponseComplete');
  assert.equal(notFound.responseStatus?.code, 404);
  assert.equal(notFound.responseStatus?.status, 'Failure');
  assert.equal(notFound.responseStatus?.reason, 'NotFound');
  assert.equal(notFound.responseStatus?.message, `configmaps "${name}-missing" not found`);

  await kubectlOk(['delete', 'configmap', name], kc());
  const del = stage(await eventsOf(logEvents, isVerb('delete', 'configmaps', name)), 'ResponseComplete');
  assert.equal(del.responseStatus?.code, 200);
  assert.equal((del.requestObject as { kind: string }).kind, 'DeleteOptions');
});

test('Secrets at Metadata: no bodies, and the data never appears', async () => {
  const name = uniqueName('audit-secret');
  await kubectlOk(['create', 'secret', 'generic', name, `--from-literal=password=${SECRET_VALUE}`], kc());
  await kubectlOk(['get', 'secret', name, '-o', 'yaml'], kc());
  await kubectlOk(['delete', 'secret', name], kc());
  for (const verb of ['create', 'get', 'delete']) {
    const events = await eventsOf(logEvents, isVerb(verb, 'secrets', name));
    for (const e of events) {
      assertShape(e);
      assert.equal(e.level, 'Metadata');
      assert.equal(e.requestObject, undefined);
      assert.equal(e.responseObject, undefined);
    }
    assert.equal(stage(events, 'ResponseComplete').responseStatus?.code, verb === 'create' ? 201 : 200);
    assert.deepEqual(stage(events, 'ResponseComplete').objectRef, { resource: 'secrets', namespace: 'default', name, apiVersion: 'v1' });
  }
  const text = readFileSync(logPath, 'utf8');
  assert.ok(!text.includes(SECRET_VALUE) && !text.includes(Buffer.from(SECRET_VALUE).toString('base64')), 'secret data in the audit log');
  await waitFor('the webhook to get the secret events', () =>
    webhookEvents().some((e) => isVerb('delete', 'secrets', name)(e) && e.stage === 'ResponseComplete'),
  );
  const raw = batches.map((b) => b.raw).join('\n');
  assert.ok(!raw.includes(SECRET_VALUE) && !raw.includes(Buffer.from(SECRET_VALUE).toString('base64')), 'secret data sent to the webhook');
});

test('a forbidden request of an impersonated user, and a failed authentication', async () => {
  const denied = await kubectl(['get', 'secrets', '--as', 'audit-alice'], kc());
  assert.notEqual(denied.code, 0);
  assert.match(denied.stderr, /Forbidden/);
  const events = await eventsOf(logEvents, (e) => e.impersonatedUser?.username === 'audit-alice' && e.verb === 'list');
  const done = stage(events, 'ResponseComplete');
  assertShape(done);
  assert.equal(done.user.username, 'kubernetes-admin', 'the event names the authenticated user');
  assert.equal(done.impersonatedUser?.username, 'audit-alice');
  assert.equal(done.responseStatus?.code, 403);
  assert.equal(done.responseStatus?.reason, 'Forbidden');
  assert.equal(done.annotations?.['authorization.k8s.io/decision'], 'forbid');
  assert.equal(stage(events, 'RequestReceived').impersonatedUser, undefined, 'impersonation happens after RequestReceived');

  const bad = writeKubeconfig(path.join(dir, 'bad-token.kubeconfig'), kapi.kubeconfig, { token: 'not-a-valid-token' });
  const unauthorized = await kubectl(['get', '--raw', '/api/v1/namespaces/kube-public/configmaps'], { kubeconfig: bad });
  assert.notEqual(unauthorized.code, 0);
  const failed = await eventsOf(
    logEvents,
    (e) => e.responseStatus?.code === 401 && e.objectRef?.namespace === 'kube-public',
    'ResponseStarted',
  );
  assert.equal(failed.length, 1, 'a failed authentication is one ResponseStarted event');
  const e = failed[0]!;
  assertShape(e);
  assert.deepEqual(e.user, {});
  assert.equal(e.level, 'RequestResponse');
  assert.equal(e.responseStatus?.reason, 'Unauthorized');
});

test('a watch: RequestReceived, ResponseStarted, ResponseComplete; /livez gets are not audited', async () => {
  const watcher = kubectlSpawn(['get', 'configmaps', '-n', 'kube-public', '--watch'], kc());
  const watchEvents = await eventsOf(logEvents, (e) => e.verb === 'watch' && e.objectRef?.namespace === 'kube-public', 'ResponseStarted');
  const auditID = watchEvents[0]!.auditID;
  const started = stage(watchEvents, 'ResponseStarted');
  assertShape(started);
  assert.deepEqual(started.responseStatus, { metadata: {}, code: 200 });
  const name = uniqueName('audit-watched');
  await kubectlOk(['create', 'configmap', name, '-n', 'kube-public'], kc());
  await watcher.waitForOutput(new RegExp(name));
  await watcher.stop();
  const all = await eventsOf(logEvents, (e) => e.auditID === auditID);
  assert.deepEqual(
    all.map((e) => e.stage),
    ['RequestReceived', 'ResponseStarted', 'ResponseComplete'],
  );
  assert.equal(stage(all, 'ResponseComplete').responseObject, undefined, 'a watch stream is not a response object');

  const livez = await kapi.http.get('/livez');
  assert.equal(livez.status, 200);
  const readyz = await kapi.http.get('/readyz?audit-probe=1');
  assert.equal(readyz.status, 200);
  await eventsOf(logEvents, (e) => e.requestURI === '/readyz?audit-probe=1');
  assert.ok(!logEvents().some((e) => e.requestURI.startsWith('/livez')), '/livez is audited despite the None rule');
});

test('the webhook gets the same events in EventList batches over mutual TLS', async () => {
  const name = uniqueName('audit-hook');
  await kubectlOk(['create', 'configmap', name], kc());
  const hooked = await eventsOf(webhookEvents, isCreate('configmaps', name));
  const logged = await eventsOf(logEvents, isCreate('configmaps', name));
  assert.deepEqual(hooked, logged);
  for (const b of batches) {
    assert.equal(b.body.kind, 'EventList');
    assert.equal(b.body.apiVersion, 'audit.k8s.io/v1');
    assert.equal(b.clientCN, 'kapi-audit');
  }
  // everything logged before this request reaches the webhook too (batches go out every second)
  const cutoff = logged[0]!.requestReceivedTimestamp;
  const notHooked = () => {
    const ids = new Set(webhookEvents().map((e) => `${e.auditID}/${e.stage}`));
    return logEvents().filter((e) => e.stageTimestamp < cutoff && !ids.has(`${e.auditID}/${e.stage}`));
  };
  await waitFor('every logged event at the webhook', () => notHooked().length === 0, 30_000).catch((err: Error) => {
    throw new Error(
      `${err.message}: ${notHooked()
        .map((e) => `${e.verb} ${e.requestURI} ${e.stage}`)
        .join('; ')}`,
    );
  });
});

test('a bad policy file or an unsupported log format stops start-up with the reason', async () => {
  const bad = path.join(dir, 'bad-policy.yaml');
  writeFileSync(bad, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n');
  await assert.rejects(
    startKapi({ extraArgs: ['--audit-policy-file', bad], readyTimeoutMs: 60_000 }),
    (err: Error) =>
      /kapi exited \(1\)/.test(err.message) &&
      /--audit-policy-file: .*rules\[0\]\.level: Unsupported value: \\?"Everything\\?"/.test(err.message),
  );
  await assert.rejects(
    startKapi({
      extraArgs: ['--audit-policy-file', path.join(dir, 'policy.yaml'), '--audit-log-path', '-', '--audit-log-format', 'legacy'],
      readyTimeoutMs: 60_000,
    }),
    (err: Error) => /kapi exited \(1\)/.test(err.message) && /--audit-log-format=legacy is not supported/.test(err.message),
  );
});
