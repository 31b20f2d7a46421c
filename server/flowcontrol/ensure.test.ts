// Keeping the bootstrap configuration over real etcd and the registry: two replicas creating
// at once, autoupdate-spec "true" objects put back, "false" ones left alone, mandatory ones
// always put back; and a running replica's classifier following the objects by watch, with
// the Dangling status written.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { startHarness, type Harness } from '../controllers/testing/harness.js';
import { internalContext } from '../controllers/util.js';
import { parseRequestInfo } from '../request/request-info.js';
import { createLogger } from '../log.js';
import {
  AUTOUPDATE_SPEC_ANNOTATION,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from './bootstrap.js';
import { ensureBootstrapConfiguration } from './ensure.js';
import { startFlowControl } from './index.js';

const G = 'flowcontrol.apiserver.k8s.io';

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('bootstrap flow control configuration', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  it('two replicas at once create every object once; a second pass changes nothing', async () => {
    const other = h.replica();
    const [a, b] = await Promise.all([ensureBootstrapConfiguration(h.main.registry), ensureBootstrapConfiguration(other.registry)]);
    const total =
      mandatoryFlowSchemas().length + suggestedFlowSchemas().length + mandatoryPriorityLevels().length + suggestedPriorityLevels().length;
    assert.equal(total, 21);
    assert.equal(new Set([...a.created, ...b.created]).size, total);
    assert.deepEqual(await ensureBootstrapConfiguration(h.main.registry), { created: [], updated: [] });
  });

  it('puts back "true" and mandatory objects, leaves "false" ones, recreates deleted ones', async () => {
    const ctx = internalContext('test', '');
    const levels = h.main.rest(G, 'v1', 'prioritylevelconfigurations');
    const schemas = h.main.rest(G, 'v1', 'flowschemas');
    const setShares =
      (shares: number, annotation?: string) =>
      (cur: KubeObject | null): KubeObject => {
        const o = structuredClone(cur!);
        (o.spec as { limited: { nominalConcurrencyShares: number } }).limited.nominalConcurrencyShares = shares;
        if (annotation) o.metadata.annotations = { ...o.metadata.annotations, [AUTOUPDATE_SPEC_ANNOTATION]: annotation };
        return o;
      };
    await levels.update(ctx, 'workload-low', setShares(7), { allowCreate: false });
    await levels.update(ctx, 'global-default', setShares(9, 'false'), { allowCreate: false });
    await levels.update(ctx, 'catch-all', setShares(11, 'false'), { allowCreate: false });
    await schemas.delete(ctx, 'service-accounts', {});
    // the exempt level's shares are the operator's to set
    await levels.update(
      ctx,
      'exempt',
      (cur) => ({ ...cur!, spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 3, lendablePercent: 0 } } }),
      { allowCreate: false },
    );
    const r = await ensureBootstrapConfiguration(h.main.registry);
    assert.deepEqual(r.created, ['flowschema/service-accounts']);
    assert.deepEqual(r.updated.sort(), ['prioritylevelconfiguration/catch-all', 'prioritylevelconfiguration/workload-low']);
    const shares = async (name: string) =>
      ((await levels.get(ctx, name, {})).spec as { limited: { nominalConcurrencyShares: number } }).limited.nominalConcurrencyShares;
    assert.equal(await shares('workload-low'), 100);
    assert.equal(await shares('global-default'), 9);
    assert.equal(await shares('catch-all'), 5);
    assert.deepEqual((await levels.get(ctx, 'exempt', {})).spec, {
      type: 'Exempt',
      exempt: { nominalConcurrencyShares: 3, lendablePercent: 0 },
    });
    const catchAll = await levels.get(ctx, 'catch-all', {});
    assert.equal(catchAll.metadata.annotations?.[AUTOUPDATE_SPEC_ANNOTATION], 'true');
  });

  it('a running replica follows the objects and records Dangling', async () => {
    const fc = startFlowControl({ resolver: h.main.registry, log: createLogger('test'), serverConcurrencyLimit: 10 });
    try {
      await fc.bootstrapped;
      const ctx = internalContext('test', '');
      const schemas = h.main.rest(G, 'v1', 'flowschemas');
      const jane = { username: 'jane', groups: ['dev', 'system:authenticated'] };
      const info = parseRequestInfo('GET', '/api/v1/pods', new URLSearchParams());
      const schemaOfJane = () => fc.controller.classify({ user: jane, info }).classification.flowSchema;
      await waitUntil('global-default in use', () => schemaOfJane() === 'global-default');
      const globalDefault = await schemas.get(ctx, 'global-default', {});
      assert.equal(fc.controller.classify({ user: jane, info }).classification.flowSchemaUID, globalDefault.metadata.uid);
      await schemas.create(ctx, {
        apiVersion: `${G}/v1`,
        kind: 'FlowSchema',
        metadata: { name: 'dev-team' },
        spec: {
          priorityLevelConfiguration: { name: 'no-such-level' },
          matchingPrecedence: 20,
          rules: [
            {
              subjects: [{ kind: 'Group', group: { name: 'dev' } }],
              resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
            },
          ],
        },
      });
      const dangling = async () => {
        const o = await schemas.get(ctx, 'dev-team', {});
        const c = ((o.status as { conditions?: Array<{ type: string; status: string; reason: string }> })?.conditions ?? []).find(
          (x) => x.type === 'Dangling',
        );
        return c?.status === 'True' && c.reason === 'NotFound';
      };
      await waitUntil('Dangling=True on dev-team', dangling);
      assert.equal(schemaOfJane(), 'global-default');
      await schemas.update(
        ctx,
        'dev-team',
        (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), priorityLevelConfiguration: { name: 'workload-low' } } }),
        { allowCreate: false },
      );
      await waitUntil('dev-team in use', () => schemaOfJane() === 'dev-team');
      await waitUntil('Dangling=False on dev-team', async () => !(await dangling()));
    } finally {
      fc.stop();
    }
  });
});
