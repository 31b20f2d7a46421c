// The max-in-flight slot over a real TLS server, with handlers the test holds open: APF
// rejects and names the schema, lets a watch go once it starts, forgets a waiter whose client
// left; the classic limits count read-only and mutating requests apart and always serve
// system:masters. Nothing here depends on timing: held requests are released by the test.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import type { KubeObject } from '../../../storage/interface.js';
import { mandatoryFlowSchemas, mandatoryPriorityLevels } from '../../flowcontrol/bootstrap.js';
import { FlowController } from '../../flowcontrol/controller.js';
import { serveFilters, type FilterServer } from '../testing/filter-server.js';
import type { TestResponse } from '../testing/client.js';
import type { Filter, Handler } from '../../request/types.js';
import { withMaxInFlight } from './max-in-flight.js';

/** stands in for authentication: the user and groups come from test headers */
const testUser: Filter = (next) => async (state) => {
  const name = state.req.headers['x-test-user'];
  const groups = state.req.headers['x-test-groups'];
  state.user = {
    username: String(name ?? 'nobody'),
    groups: [
      ...String(groups ?? '')
        .split(',')
        .filter(Boolean),
      'system:authenticated',
    ],
  };
  return next(state);
};

/** a handler that holds each request whose path has `hold=<id>` until release(id) */
class Gates {
  private readonly open = new Map<string, { entered: () => void; release: () => void; enteredP: Promise<void>; releaseP: Promise<void> }>();
  served = 0;

  private gate(id: string) {
    let g = this.open.get(id);
    if (!g) {
      let entered!: () => void;
      let release!: () => void;
      const enteredP = new Promise<void>((r) => (entered = r));
      const releaseP = new Promise<void>((r) => (release = r));
      g = { entered, release, enteredP, releaseP };
      this.open.set(id, g);
    }
    return g;
  }
  entered(id: string): Promise<void> {
    return this.gate(id).enteredP;
  }
  release(id: string): void {
    this.gate(id).release();
  }
  readonly handler: Handler = async (state) => {
    this.served++;
    const id = state.query.get('hold');
    if (id) {
      const g = this.gate(id);
      g.entered();
      await g.releaseP;
    }
    state.res.statusCode = 200;
    state.res.setHeader('Content-Type', 'text/plain');
    state.res.end('ok\n');
  };
}

function send(port: number, ca: string, method: string, path: string, user: string, groups = '') {
  const req = httpsRequest({
    host: '127.0.0.1',
    port,
    method,
    path,
    ca,
    agent: false,
    headers: { 'x-test-user': user, 'x-test-groups': groups },
  });
  const answer = new Promise<TestResponse>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.from(text), text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
  });
  req.end();
  return { req, answer };
}

function level(name: string, limitResponse: Record<string, unknown>): KubeObject {
  return { metadata: { name, uid: `uid-${name}` }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse } } };
}
const devsSchema: KubeObject = {
  metadata: { name: 'devs', uid: 'uid-devs' },
  spec: {
    priorityLevelConfiguration: { name: 'tight' },
    matchingPrecedence: 10,
    rules: [
      {
        subjects: [{ kind: 'Group', group: { name: 'devs' } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
      },
    ],
  },
};

describe('withMaxInFlight: priority and fairness', () => {
  let srv: FilterServer;
  const gates = new Gates();
  const controller = new FlowController({ serverConcurrencyLimit: 1 });
  const call = (method: string, path: string, user = 'jane', groups = 'devs') =>
    send(srv.client.port, srv.client.ca, method, path, user, groups);

  before(async () => {
    controller.update([...mandatoryFlowSchemas(), devsSchema], [...mandatoryPriorityLevels(), level('tight', { type: 'Reject' })]);
    srv = await serveFilters([testUser, withMaxInFlight({ kind: 'priority-and-fairness', controller })], gates.handler);
  });
  after(async () => {
    await srv?.close();
  });

  it('a full Reject level answers 429 with Retry-After and the schema and level UIDs; system:masters is exempt', async () => {
    const held = call('GET', '/api/v1/pods?hold=a');
    await gates.entered('a');
    const rejected = await call('GET', '/api/v1/pods').answer;
    assert.equal(rejected.status, 429);
    assert.equal(rejected.headers['retry-after'], '1');
    assert.equal(rejected.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(rejected.text, 'Too many requests, please try again later.\n');
    assert.equal(rejected.headers['x-kubernetes-pf-flowschema-uid'], 'uid-devs');
    assert.equal(rejected.headers['x-kubernetes-pf-prioritylevel-uid'], 'uid-tight');
    const admin = await call('GET', '/api/v1/pods', 'admin', 'system:masters').answer;
    assert.equal(admin.status, 200);
    assert.equal(admin.headers['x-kubernetes-pf-flowschema-uid'], '');
    gates.release('a');
    const done = await held.answer;
    assert.equal(done.status, 200);
    assert.equal(done.headers['x-kubernetes-pf-flowschema-uid'], 'uid-devs');
    assert.equal((await call('GET', '/api/v1/pods').answer).status, 200);
  });

  it('a watch gives its seat back once it starts', async () => {
    const watch = call('GET', '/api/v1/pods?watch=1&hold=w');
    await gates.entered('w');
    assert.equal((await call('GET', '/api/v1/pods').answer).status, 200);
    gates.release('w');
    assert.equal((await watch.answer).status, 200);
  });

  it('exec and log requests are not limited', async () => {
    const held = call('GET', '/api/v1/pods?hold=b');
    await gates.entered('b');
    assert.equal((await call('GET', '/api/v1/namespaces/x/pods/p/log').answer).status, 200);
    assert.equal((await call('GET', '/api/v1/pods').answer).status, 429);
    gates.release('b');
    await held.answer;
  });

  it('a queued request whose client goes away leaves the queue', async () => {
    controller.update(
      [...mandatoryFlowSchemas(), devsSchema],
      [...mandatoryPriorityLevels(), level('tight', { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 5 } })],
    );
    const held = call('GET', '/api/v1/pods?hold=c');
    await gates.entered('c');
    const servedBefore = gates.served;
    const waiting = call('GET', '/api/v1/pods?hold=never');
    waiting.answer.catch(() => {});
    const deadline = Date.now() + 30_000;
    while (controller.levelStats('tight')?.waiting !== 1) {
      assert.ok(Date.now() < deadline, 'the request never queued');
      await new Promise((r) => setTimeout(r, 10));
    }
    waiting.req.destroy();
    while (controller.levelStats('tight')?.waiting !== 0) {
      assert.ok(Date.now() < deadline, 'the request stayed in the queue');
      await new Promise((r) => setTimeout(r, 10));
    }
    gates.release('c');
    assert.equal((await held.answer).status, 200);
    assert.equal(gates.served, servedBefore, 'the abandoned request never reached the handler');
    assert.deepEqual(controller.levelStats('tight'), { concurrencyLimit: 1, executing: 0, waiting: 0 });
  });
});

describe('withMaxInFlight: the classic limits', () => {
  let srv: FilterServer;
  const gates = new Gates();
  const call = (method: string, path: string, user = 'jane', groups = 'devs') =>
    send(srv.client.port, srv.client.ca, method, path, user, groups);

  before(async () => {
    srv = await serveFilters([testUser, withMaxInFlight({ kind: 'max-in-flight', readOnlyLimit: 1, mutatingLimit: 1 })], gates.handler);
  });
  after(async () => {
    await srv?.close();
  });

  it('counts read-only and mutating requests apart; system:masters and watches always go through', async () => {
    const write = call('POST', '/api/v1/namespaces/x/configmaps?hold=w1');
    await gates.entered('w1');
    const rejected = await call('DELETE', '/api/v1/namespaces/x/configmaps/c').answer;
    assert.equal(rejected.status, 429);
    assert.equal(rejected.headers['retry-after'], '1');
    assert.equal(rejected.headers['x-kubernetes-pf-flowschema-uid'], undefined);
    assert.equal((await call('DELETE', '/api/v1/namespaces/x/configmaps/c', 'admin', 'system:masters').answer).status, 200);
    const read = call('GET', '/api/v1/pods?hold=r1');
    await gates.entered('r1');
    assert.equal((await call('GET', '/api/v1/pods').answer).status, 429);
    assert.equal((await call('GET', '/api/v1/pods?watch=true').answer).status, 200);
    gates.release('w1');
    gates.release('r1');
    assert.equal((await write.answer).status, 200);
    assert.equal((await read.answer).status, 200);
    assert.equal((await call('POST', '/api/v1/namespaces/x/configmaps').answer).status, 200);
  });
});
