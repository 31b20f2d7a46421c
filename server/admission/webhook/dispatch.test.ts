// matchPolicy: Exact matches only the request's own version; Equivalent (the default) also
// the same resource served at another version of its group, with that version's kind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceInfo } from '../../apis/types.js';
import type { AdmissionAttributes, RESTResource, ResourceResolver } from '../../registry/rest.js';
import { forTarget, fromTarget, matchingTarget } from './dispatch.js';
import type { WebhookEntry } from './types.js';

const hpa = (version: string) =>
  ({
    group: 'autoscaling',
    version,
    resource: 'horizontalpodautoscalers',
    kind: 'HorizontalPodAutoscaler',
    subresources: [],
  }) as unknown as ResourceInfo;
const resolver: ResourceResolver = {
  lookup: () => undefined,
  all: () => [{ info: hpa('v1') }, { info: hpa('v2') }] as unknown as RESTResource[],
};
const attrs = {
  operation: 'CREATE',
  resource: hpa('v2'),
  namespace: 'ns',
  name: 'h',
  object: null,
  oldObject: null,
  dryRun: false,
  user: { username: 'u', groups: [] },
} as AdmissionAttributes;

function entry(matchPolicy?: 'Exact' | 'Equivalent'): WebhookEntry {
  return {
    uid: 'c/0/w',
    configurationName: 'c',
    spec: {
      name: 'w',
      clientConfig: { url: 'https://x' },
      rules: [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] }],
      matchPolicy,
    },
  };
}

test('Exact: a v1 rule does not match a v2 request', () => {
  assert.equal(matchingTarget(entry('Exact'), attrs, resolver), undefined);
});

test('Equivalent (default): a v1 rule matches a v2 request, called for the v1 resource and kind', () => {
  const expected = { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler' };
  assert.deepEqual(matchingTarget(entry('Equivalent'), attrs, resolver), expected);
  assert.deepEqual(matchingTarget(entry(), attrs, resolver), expected);
  assert.deepEqual(matchingTarget(entry('Exact'), { ...attrs, resource: hpa('v1') }, resolver), expected);
});

test('Equivalent: the webhook sees the object in the version it matched, and its answer comes back', () => {
  const v2 = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'h', namespace: 'ns' },
    spec: {
      scaleTargetRef: { kind: 'Deployment', name: 'd', apiVersion: 'apps/v1' },
      minReplicas: 1,
      maxReplicas: 3,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    },
  };
  const a = { ...attrs, object: v2 } as unknown as AdmissionAttributes;
  const target = matchingTarget(entry(), a, resolver)!;
  const seen = forTarget(a, target);
  assert.equal(seen.object!.apiVersion, 'autoscaling/v1');
  assert.equal((seen.object as any).spec.targetCPUUtilizationPercentage, 50);
  const back = fromTarget(structuredClone(seen.object!), a, target);
  assert.equal(back.apiVersion, 'autoscaling/v2');
  assert.deepEqual((back as any).spec.metrics, v2.spec.metrics);
  // the request's own version: nothing converted
  assert.equal(forTarget(a, { ...target, version: 'v2' }), a);
});
