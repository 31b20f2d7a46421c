import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Auditor } from '../../audit/config.js';
import type { AuditEvent } from '../../audit/event.js';
import { parsePolicy, policyEvaluator } from '../../audit/policy.js';
import { readBody } from '../../endpoints/decode.js';
import type { Authorizer } from '../../authz/authorizer.js';
import { writeBody, writeStatusError } from '../../request/response.js';
import { errors } from '../../machinery/status.js';
import { serveFilters, type FilterServer } from '../testing/filter-server.js';
import { TestClient } from '../testing/client.js';
import type { Filter, Handler } from '../../request/types.js';
import { withAudit, withAuditCapture, withAuditInit, withAuthorizationAudit } from './audit.js';
import { withAuthorization } from './authorization.js';
import { withPanicRecovery } from './panic-recovery.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/quiet"]
- level: Metadata
  omitStages: [RequestReceived]
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
- level: Request
`;

const events: AuditEvent[] = [];
const auditor: Auditor = {
  evaluate: policyEvaluator(parsePolicy(POLICY)),
  backend: { name: 'memory', processEvents: (evs) => void events.push(...evs), shutdown: async () => undefined },
};

// authentication for the test: the user named in a header, a 401 without it
const fakeAuthentication: Filter = (next) => async (state) => {
  const name = state.req.headers['x-test-user'];
  if (typeof name !== 'string') {
    await writeStatusError(state, errors.unauthorized());
    return;
  }
  state.user = { username: name, groups: ['system:authenticated'] };
  await next(state);
};

const authorizer: Authorizer = {
  authorize: async (attrs) =>
    attrs.user.username === 'denied' ? { decision: 'deny', reason: 'not this one' } : { decision: 'allow', reason: 'test says yes' },
};

const managed = [{ manager: 'm', operation: 'Update', apiVersion: 'v1' }];

const api: Handler = async (state) => {
  if (state.path.endsWith('/panic')) throw new Error('boom');
  if (state.method === 'POST') {
    const body = JSON.parse((await readBody(state, 1 << 20)).toString('utf8')) as { metadata: Record<string, unknown> };
    const created = { ...body, metadata: { ...body.metadata, uid: 'u-1', resourceVersion: '7', managedFields: managed } };
    await writeBody(state, 201, JSON.stringify(created), 'application/json');
    return;
  }
  const obj = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: state.info.name, managedFields: managed }, data: { k: 'v' } };
  await writeBody(state, 200, JSON.stringify(obj), 'application/json');
};

let srv: FilterServer;

before(async () => {
  srv = await serveFilters(
    [
      withAuditInit(),
      withPanicRecovery(),
      withAuditCapture(auditor),
      fakeAuthentication,
      withAudit(auditor),
      withAuthorizationAudit(authorizer, auditor, withAuthorization),
    ],
    api,
  );
});

after(async () => {
  await srv.close();
});

function ofRequest(auditID: string): AuditEvent[] {
  return events.filter((e) => e.auditID === auditID);
}

test('a create at RequestResponse: bodies without managedFields, objectRef from the body, sourceIPs, Audit-Id', async () => {
  const res = await srv.client.http1({
    method: 'POST',
    path: '/api/v1/namespaces/default/configmaps',
    headers: {
      'x-test-user': 'ann',
      'content-type': 'application/json',
      'x-forwarded-for': '10.0.0.1, 10.0.0.2',
      'audit-id': 'my-audit-id',
    },
    body: JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'cm1', managedFields: managed }, data: { a: 'b' } }),
  });
  assert.equal(res.status, 201);
  assert.equal(res.headers['audit-id'], 'my-audit-id');
  const evs = ofRequest('my-audit-id');
  assert.deepEqual(
    evs.map((e) => e.stage),
    ['RequestReceived', 'ResponseComplete'],
  );
  const done = evs[1]!;
  assert.equal(done.level, 'RequestResponse');
  assert.deepEqual(done.sourceIPs, ['10.0.0.1', '10.0.0.2', '127.0.0.1']);
  assert.deepEqual(done.objectRef, { resource: 'configmaps', namespace: 'default', name: 'cm1', apiVersion: 'v1' });
  assert.deepEqual(done.responseStatus, { metadata: {}, code: 201 });
  assert.deepEqual(done.requestObject, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'cm1' }, data: { a: 'b' } });
  assert.deepEqual((done.responseObject as { metadata: unknown }).metadata, { name: 'cm1', uid: 'u-1', resourceVersion: '7' });
  assert.deepEqual(done.annotations, { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': 'test says yes' });
  assert.equal(evs[0]!.annotations, undefined, 'authorization runs after RequestReceived');
});

test('over HTTP/2 the response body is recorded once', async () => {
  const session = srv.client.session();
  try {
    const res = await TestClient.http2(session, { path: '/api/v1/namespaces/default/configmaps/cm2', headers: { 'x-test-user': 'ann' } });
    assert.equal(res.status, 200);
    const done = ofRequest(String(res.headers['audit-id'])).find((e) => e.stage === 'ResponseComplete');
    assert.deepEqual(done?.responseObject, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'cm2' }, data: { k: 'v' } });
  } finally {
    session.close();
  }
});

test('omitStages, a denial, a panic, a failed authentication, level None', async () => {
  const secret = await srv.client.http1({ path: '/api/v1/namespaces/default/secrets/s', headers: { 'x-test-user': 'denied' } });
  assert.equal(secret.status, 403);
  const secretEvents = ofRequest(String(secret.headers['audit-id']));
  assert.deepEqual(
    secretEvents.map((e) => e.stage),
    ['ResponseComplete'],
    'RequestReceived omitted',
  );
  assert.equal(secretEvents[0]!.level, 'Metadata');
  assert.equal(secretEvents[0]!.responseObject, undefined);
  assert.equal((secretEvents[0]!.responseStatus as { reason: string }).reason, 'Forbidden');
  assert.deepEqual(secretEvents[0]!.annotations, {
    'authorization.k8s.io/decision': 'forbid',
    'authorization.k8s.io/reason': 'not this one',
  });

  const panic = await srv.client.http1({ path: '/api/v1/namespaces/default/pods/panic', headers: { 'x-test-user': 'ann' } });
  assert.equal(panic.status, 500);
  const panicEvents = ofRequest(String(panic.headers['audit-id']));
  assert.deepEqual(
    panicEvents.map((e) => e.stage),
    ['RequestReceived', 'Panic'],
  );
  assert.deepEqual(panicEvents[1]!.responseStatus, {
    metadata: {},
    status: 'Failure',
    message: "APIServer panic'd: boom",
    reason: 'InternalError',
    code: 500,
  });

  const anonymous = await srv.client.http1({ path: '/api/v1/namespaces/default/configmaps' });
  assert.equal(anonymous.status, 401);
  const failed = ofRequest(String(anonymous.headers['audit-id']));
  assert.equal(failed.length, 1);
  assert.equal(failed[0]!.stage, 'ResponseStarted');
  assert.deepEqual(failed[0]!.user, {});
  assert.equal(failed[0]!.verb, 'list');
  assert.deepEqual(failed[0]!.responseStatus, {
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  });

  const quiet = await srv.client.http1({ path: '/quiet', headers: { 'x-test-user': 'ann' } });
  assert.equal(quiet.status, 200);
  assert.deepEqual(ofRequest(String(quiet.headers['audit-id'])), []);
});

test('a strict backend that cannot store RequestReceived fails the request unserved', async () => {
  let served = 0;
  const strict: Auditor = {
    evaluate: policyEvaluator(parsePolicy(POLICY)),
    backend: { name: 'refusing', processEvents: async () => false, shutdown: async () => undefined },
  };
  const server = await serveFilters([withAuditInit(), withAuditCapture(strict), fakeAuthentication, withAudit(strict)], async (state) => {
    served++;
    await writeBody(state, 200, '{}', 'application/json');
  });
  try {
    const res = await server.client.http1({ path: '/api/v1/namespaces/default/configmaps?x=1', headers: { 'x-test-user': 'ann' } });
    assert.equal(res.status, 500);
    assert.equal(res.text, 'Internal Server Error: "/api/v1/namespaces/default/configmaps?x=1": failed to store audit event\n');
    assert.equal(served, 0);
  } finally {
    await server.close();
  }
});
