import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convertObject } from './index.js';
import { hpaV1ToV2, hpaV2ToV1, behaviorAnnotation, conditionsAnnotation, metricStatusesAnnotation } from './hpa.js';

const core = { group: '', version: 'v1', kind: 'Event' };
const eventsV1 = { group: 'events.k8s.io', version: 'v1', kind: 'Event' };

test('identical shapes only change apiVersion, in kube field order', () => {
  const out = convertObject(
    { metadata: { uid: 'u', name: 'x' }, spec: { a: 1 }, status: {}, kind: 'Thing', apiVersion: 'g/v1beta1' },
    { group: 'g', version: 'v1beta1', kind: 'Thing' },
    { group: 'g', version: 'v1', kind: 'Thing' },
  );
  assert.deepEqual(Object.keys(out), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  assert.equal(out.apiVersion, 'g/v1');
  assert.deepEqual(Object.keys(out.metadata), ['name', 'uid']);
});

test('core Event <-> events.k8s.io Event', () => {
  const stored = convertObject(
    {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e' },
      regarding: { kind: 'Pod', name: 'p' },
      note: 'n',
      reportingController: 'c',
      deprecatedCount: 3,
      type: 'Warning',
    },
    eventsV1,
    core,
  );
  assert.equal(stored.apiVersion, 'v1');
  assert.deepEqual(stored.involvedObject, { kind: 'Pod', name: 'p' });
  assert.equal(stored.message, 'n');
  assert.equal(stored.reportingComponent, 'c');
  assert.equal(stored.count, 3);
  assert.deepEqual(Object.keys(stored), [
    'kind',
    'apiVersion',
    'metadata',
    'involvedObject',
    'message',
    'source',
    'firstTimestamp',
    'lastTimestamp',
    'count',
    'type',
    'eventTime',
    'reportingComponent',
    'reportingInstance',
  ]);
  const back = convertObject(stored, core, eventsV1);
  assert.deepEqual(back, {
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    metadata: { name: 'e' },
    eventTime: null,
    reportingController: 'c',
    regarding: { kind: 'Pod', name: 'p' },
    note: 'n',
    type: 'Warning',
    deprecatedSource: {},
    deprecatedFirstTimestamp: null,
    deprecatedLastTimestamp: null,
    deprecatedCount: 3,
  });
});

test('HPA v2 -> v1 puts what v1 cannot say into annotations; v1 -> v2 takes it back', () => {
  const v2 = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'h', annotations: { keep: 'me' } },
    spec: {
      scaleTargetRef: { kind: 'Deployment', name: 'd' },
      minReplicas: 1,
      maxReplicas: 3,
      metrics: [
        { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
      behavior: {
        scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Min', policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] },
      },
    },
    status: {
      currentReplicas: 2,
      desiredReplicas: 2,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 55, averageValue: '100m' } } }],
      conditions: [{ type: 'AbleToScale', status: 'True', reason: 'R' }],
    },
  };
  const v1 = hpaV2ToV1(structuredClone(v2));
  assert.deepEqual(v1.spec, {
    scaleTargetRef: { kind: 'Deployment', name: 'd' },
    minReplicas: 1,
    maxReplicas: 3,
    targetCPUUtilizationPercentage: 70,
  });
  assert.deepEqual(v1.status, { currentReplicas: 2, desiredReplicas: 2, currentCPUUtilizationPercentage: 55 });
  const ann = v1.metadata.annotations ?? {};
  assert.equal(ann.keep, 'me');
  assert.deepEqual(JSON.parse(ann['autoscaling.alpha.kubernetes.io/metrics']), [
    { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
  ]);
  assert.deepEqual(JSON.parse(ann[metricStatusesAnnotation]), [
    { type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 55, currentAverageValue: '100m' } },
  ]);
  assert.deepEqual(JSON.parse(ann[conditionsAnnotation]), [{ type: 'AbleToScale', status: 'True', reason: 'R' }]);
  assert.deepEqual(JSON.parse(ann[behaviorAnnotation]), {
    ScaleUp: null,
    ScaleDown: {
      StabilizationWindowSeconds: 60,
      SelectPolicy: 'Min',
      Policies: [{ Type: 'Pods', Value: 1, PeriodSeconds: 30 }],
      Tolerance: null,
    },
  });

  const round = hpaV1ToV2(structuredClone(v1));
  assert.deepEqual(round.metadata.annotations, { keep: 'me' });
  assert.deepEqual(round.spec, {
    scaleTargetRef: { kind: 'Deployment', name: 'd' },
    minReplicas: 1,
    maxReplicas: 3,
    metrics: v2.spec.metrics,
    behavior: {
      scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Min', policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] },
    },
  });
  assert.deepEqual(round.status, {
    currentReplicas: 2,
    desiredReplicas: 2,
    currentMetrics: v2.status.currentMetrics,
    conditions: v2.status.conditions,
  });
});

test('stale round-trip annotations on a v2 object are not served to v1', () => {
  const v1 = hpaV2ToV1({
    metadata: { name: 'h', annotations: { [conditionsAnnotation]: '[{"type":"Old"}]' } },
    spec: { scaleTargetRef: {}, maxReplicas: 1, metrics: [] },
  });
  assert.equal(v1.metadata.annotations, undefined);
});
