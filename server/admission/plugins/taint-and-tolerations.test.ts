// Unit tests of the plugins that need no other objects: DefaultTolerationSeconds (with its
// flags), TaintNodesByCondition, and RuntimeClass's toleration merge and LimitRanger's aggregate
// message.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import type { AdmissionAttributes, AdmissionOperation } from '../../registry/rest.js';
import type { ResourceInfo } from '../../apis/types.js';
import type { AdmissionDeps } from '../plugin.js';
import { defaultTolerationSecondsFactory, defaultTolerationSecondsPlugin } from './default-toleration-seconds.js';
import { aggregate } from './limit-ranger.js';
import { mergeTolerations } from './runtime-class.js';
import { taintNodesByConditionPlugin } from './taint-nodes-by-condition.js';
import { requestContext, testUser } from './test-helpers.js';

function info(resource: string, kind: string): ResourceInfo {
  return {
    group: '',
    version: 'v1',
    resource,
    singularName: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: resource === 'pods',
    verbs: [],
    shortNames: [],
    categories: [],
    subresources: [],
    storageVersion: 'v1',
    preferredVersion: 'v1',
    storageVersionHash: '',
    definition: '',
  };
}

function attrs(
  resource: string,
  kind: string,
  operation: AdmissionOperation,
  object: KubeObject,
  subresource?: string,
): AdmissionAttributes {
  return {
    operation,
    resource: info(resource, kind),
    subresource,
    namespace: 'default',
    name: object.metadata.name ?? '',
    object,
    oldObject: null,
    dryRun: false,
    user: testUser,
  };
}

const pod = (tolerations?: unknown[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers: [], ...(tolerations ? { tolerations } : {}) },
});
const tolerationsOf = (o: KubeObject): unknown => (o.spec as Record<string, unknown>).tolerations;

describe('DefaultTolerationSeconds', () => {
  const plugin = defaultTolerationSecondsPlugin({ notReadySeconds: 300, unreachableSeconds: 300 });

  it('adds both NoExecute tolerations on create and update', async () => {
    for (const op of ['CREATE', 'UPDATE'] as const) {
      const got = await plugin.mutate!(attrs('pods', 'Pod', op, pod([{ key: 'a', operator: 'Exists' }])), requestContext());
      assert.deepEqual(tolerationsOf(got), [
        { key: 'a', operator: 'Exists' },
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ]);
    }
  });

  it('keeps the pod own ones: a matching key, an empty key, an empty effect', async () => {
    const own = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
    const one = await plugin.mutate!(attrs('pods', 'Pod', 'CREATE', pod([own])), requestContext());
    assert.deepEqual(tolerationsOf(one), [
      own,
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    const all = await plugin.mutate!(attrs('pods', 'Pod', 'CREATE', pod([{ operator: 'Exists' }])), requestContext());
    assert.deepEqual(tolerationsOf(all), [{ operator: 'Exists' }]);
    const noSchedule = await plugin.mutate!(
      attrs('pods', 'Pod', 'CREATE', pod([{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }])),
      requestContext(),
    );
    assert.equal((tolerationsOf(noSchedule) as unknown[]).length, 3);
  });

  it('ignores subresources and other resources', () => {
    assert.equal(plugin.handles!(attrs('pods', 'Pod', 'UPDATE', pod(), 'status')), false);
    assert.equal(plugin.handles!(attrs('nodes', 'Node', 'CREATE', pod())), false);
  });

  it('takes the seconds from the flags', async () => {
    const flags: Record<string, number> = { 'default-not-ready-toleration-seconds': 60, 'default-unreachable-toleration-seconds': 120 };
    const deps = { flag: (n: string) => flags[n] } as unknown as AdmissionDeps;
    const p = await defaultTolerationSecondsFactory.create(deps, undefined);
    const got = await p.mutate!(attrs('pods', 'Pod', 'CREATE', pod()), requestContext());
    assert.deepEqual(
      (tolerationsOf(got) as Array<{ tolerationSeconds: number }>).map((t) => t.tolerationSeconds),
      [60, 120],
    );
    const defaults = await defaultTolerationSecondsFactory.create({} as AdmissionDeps, undefined);
    const got2 = await defaults.mutate!(attrs('pods', 'Pod', 'CREATE', pod()), requestContext());
    assert.deepEqual(
      (tolerationsOf(got2) as Array<{ tolerationSeconds: number }>).map((t) => t.tolerationSeconds),
      [300, 300],
    );
  });
});

describe('TaintNodesByCondition', () => {
  const plugin = taintNodesByConditionPlugin();
  const node = (taints?: unknown[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1' },
    ...(taints ? { spec: { taints } } : {}),
  });

  it('taints a new node not-ready:NoSchedule once', async () => {
    const got = await plugin.mutate!(attrs('nodes', 'Node', 'CREATE', node()), requestContext());
    assert.deepEqual(got.spec, { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
    const already = await plugin.mutate!(
      attrs('nodes', 'Node', 'CREATE', node([{ key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' }])),
      requestContext(),
    );
    assert.deepEqual(already.spec, { taints: [{ key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' }] });
    assert.equal(plugin.handles!(attrs('nodes', 'Node', 'UPDATE', node())), false);
  });
});

describe('helpers', () => {
  it('mergeTolerations drops tolerations another one covers', () => {
    const exists = { key: 'k', operator: 'Exists', effect: 'NoSchedule' };
    const equal = { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' };
    assert.deepEqual(mergeTolerations([equal], [exists]), [exists]);
    assert.deepEqual(mergeTolerations([exists], [exists]), [exists]);
    assert.deepEqual(mergeTolerations([{ operator: 'Exists' }], [equal]), [{ operator: 'Exists' }]);
    const short = { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
    const long = { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 100 };
    assert.deepEqual(mergeTolerations([short], [long]), [long]);
  });

  it('aggregate messages as apimachinery prints them', () => {
    assert.equal(aggregate(['a']), 'a');
    assert.equal(aggregate(['a', 'b', 'a']), '[a, b]');
  });
});
