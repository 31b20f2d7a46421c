// The FlowController: concurrency shared among levels by shares, rejection at a full Reject
// level, exempt never limited, and configuration changes taking effect.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { parseRequestInfo } from '../request/request-info.js';
import { mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels } from './bootstrap.js';
import { FlowController, type Admission } from './controller.js';

const info = (method: string, path: string) => parseRequestInfo(method, path, new URLSearchParams());
const jane = { username: 'jane', groups: ['dev', 'system:authenticated'] };
const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

function rejectLevel(name: string, shares: number): KubeObject {
  return {
    metadata: { name, uid: `uid-${name}` },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: shares, limitResponse: { type: 'Reject' } } },
  };
}
function schemaFor(name: string, level: string, group: string): KubeObject {
  return {
    metadata: { name, uid: `uid-${name}` },
    spec: {
      priorityLevelConfiguration: { name: level },
      matchingPrecedence: 50,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'Group', group: { name: group } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
        },
      ],
    },
  };
}
const admittedOf = (a: Admission) => {
  assert.equal(a.admitted, true);
  return a as Extract<Admission, { admitted: true }>;
};

describe('FlowController', () => {
  it('shares the server concurrency among levels by nominalConcurrencyShares (rounded up)', () => {
    const c = new FlowController({ serverConcurrencyLimit: 600 });
    c.update([...mandatoryFlowSchemas(), ...suggestedFlowSchemas()], [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()]);
    // shares: catch-all 5, system 30, node-high 40, leader-election 10, workload-high 40, workload-low 100, global-default 20 (245)
    assert.equal(c.levelStats('global-default')?.concurrencyLimit, Math.ceil((600 * 20) / 245));
    assert.equal(c.levelStats('workload-low')?.concurrencyLimit, Math.ceil((600 * 100) / 245));
    assert.equal(c.levelStats('catch-all')?.concurrencyLimit, Math.ceil((600 * 5) / 245));
    assert.equal(c.levelStats('exempt'), undefined);
  });

  it('a full Reject level turns the next request away and names the schema and level', async () => {
    const c = new FlowController({ serverConcurrencyLimit: 2 });
    c.update([...mandatoryFlowSchemas(), schemaFor('dev', 'tight', 'dev')], [...mandatoryPriorityLevels(), rejectLevel('tight', 1)]);
    assert.equal(c.levelStats('tight')?.concurrencyLimit, 1);
    const first = admittedOf(await c.admit({ user: jane, info: info('GET', '/api/v1/pods') }));
    assert.equal(first.classification.flowSchemaUID, 'uid-dev');
    const second = await c.admit({ user: jane, info: info('GET', '/api/v1/pods') });
    assert.deepEqual(second, {
      admitted: false,
      reason: 'rejected',
      retryAfterSeconds: 1,
      classification: { flowSchema: 'dev', flowSchemaUID: 'uid-dev', priorityLevel: 'tight', priorityLevelUID: 'uid-tight', exempt: false },
    });
    // the exempt level is never limited
    for (let i = 0; i < 5; i++) admittedOf(await c.admit({ user: admin, info: info('GET', '/api/v1/pods') }));
    first.release();
    admittedOf(await c.admit({ user: jane, info: info('GET', '/api/v1/pods') })).release();
  });

  it('follows changes: a schema removed sends its flows elsewhere; a busy old level drains', async () => {
    const c = new FlowController({ serverConcurrencyLimit: 2 });
    const levels = [...mandatoryPriorityLevels(), rejectLevel('tight', 1)];
    c.update([...mandatoryFlowSchemas(), schemaFor('dev', 'tight', 'dev')], levels);
    const held = admittedOf(await c.admit({ user: jane, info: info('GET', '/api/v1/pods') }));
    c.update([...mandatoryFlowSchemas()], mandatoryPriorityLevels());
    const next = admittedOf(await c.admit({ user: jane, info: info('GET', '/api/v1/pods') }));
    assert.equal(next.classification.flowSchema, 'catch-all');
    assert.equal(c.levelStats('tight')?.executing, 1);
    held.release();
    next.release();
    assert.equal(c.levelStats('tight'), undefined);
  });

  it('classifies each user and request by its own match, asked again and again', () => {
    const c = new FlowController({ serverConcurrencyLimit: 20 });
    c.update([...mandatoryFlowSchemas(), schemaFor('dev', 'tight', 'dev')], [...mandatoryPriorityLevels(), rejectLevel('tight', 1)]);
    const joe = { username: 'joe', groups: ['system:authenticated'] };
    for (let round = 0; round < 2; round++) {
      assert.equal(c.classify({ user: jane, info: info('GET', '/api/v1/pods') }).classification.flowSchema, 'dev');
      assert.equal(c.classify({ user: joe, info: info('GET', '/api/v1/pods') }).classification.flowSchema, 'catch-all');
      assert.equal(c.classify({ user: admin, info: info('GET', '/api/v1/pods') }).classification.flowSchema, 'exempt');
      // the schema's rule covers cluster-scoped and every namespace: namespaced requests too
      assert.equal(c.classify({ user: jane, info: info('DELETE', '/api/v1/namespaces/a/pods/x') }).classification.flowSchema, 'dev');
      // non-resource requests match no resource rule
      assert.equal(c.classify({ user: jane, info: info('GET', '/healthz') }).classification.flowSchema, 'catch-all');
      assert.equal(c.classify({ user: jane, info: info('GET', '/api/v1/pods') }).distinguisher, 'jane');
    }
  });
});
