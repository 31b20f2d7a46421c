// apps/v1 defaulting and validation against what kube-apiserver 1.33 answers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { cause, kind } from '../testing/strategies.js';

const deployments = kind('apps', 'v1', 'deployments');
const statefulsets = kind('apps', 'v1', 'statefulsets');
const daemonsets = kind('apps', 'v1', 'daemonsets');
const replicasets = kind('apps', 'v1', 'replicasets');

const container = { name: 'nginx', image: 'nginx:1.27' };
const defaultedContainer = {
  name: 'nginx',
  image: 'nginx:1.27',
  resources: {},
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  imagePullPolicy: 'IfNotPresent',
};
const defaultedPodSpec = {
  containers: [defaultedContainer],
  restartPolicy: 'Always',
  terminationGracePeriodSeconds: 30,
  dnsPolicy: 'ClusterFirst',
  securityContext: {},
  schedulerName: 'default-scheduler',
};

function workload(kindName: string, spec: Record<string, unknown>, name = 'web'): KubeObject {
  return { apiVersion: 'apps/v1', kind: kindName, metadata: { name }, spec };
}

const template = (labels: Record<string, string> = { app: 'web' }, spec: Record<string, unknown> = { containers: [container] }) => ({
  metadata: { labels },
  spec,
});

const selectorMismatch = (labels: string) =>
  cause('FieldValueInvalid', 'spec.template.metadata.labels', `Invalid value: ${labels}: \`selector\` does not match template \`labels\``);

test('Deployment defaults (spec in Go field order)', () => {
  const out = deployments.defaulted(workload('Deployment', { selector: { matchLabels: { app: 'web' } }, template: template() }));
  assert.deepEqual(out.spec, {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { creationTimestamp: null, labels: { app: 'web' } }, spec: defaultedPodSpec },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
  });
  assert.deepEqual(Object.keys(out.spec as object), [
    'replicas',
    'selector',
    'template',
    'strategy',
    'revisionHistoryLimit',
    'progressDeadlineSeconds',
  ]);
  assert.deepEqual(out.status, {});
  assert.equal(out.metadata.generation, 1);
});

test('invalid Deployments', () => {
  assert.deepEqual(
    deployments.createCauses(
      workload('Deployment', {
        replicas: -1,
        template: template({ app: 'web' }, { restartPolicy: 'Never', containers: [{ name: 'nginx' }] }),
      }),
    ),
    [
      cause('FieldValueInvalid', 'spec.replicas', 'Invalid value: -1: must be greater than or equal to 0'),
      cause('FieldValueRequired', 'spec.selector', 'Required value'),
      selectorMismatch('map[string]string{"app":"web"}'),
      cause('FieldValueRequired', 'spec.template.spec.containers[0].image', 'Required value'),
      cause('FieldValueNotSupported', 'spec.template.spec.restartPolicy', 'Unsupported value: "Never": supported values: "Always"'),
    ],
  );
  assert.deepEqual(
    deployments.createCauses(
      workload('Deployment', {
        selector: { matchLabels: { app: 'web' } },
        template: template(),
        strategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } },
        minReadySeconds: 10,
        progressDeadlineSeconds: 5,
      }),
    ),
    [
      cause(
        'FieldValueInvalid',
        'spec.strategy.rollingUpdate.maxUnavailable',
        'Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
      ),
      cause('FieldValueInvalid', 'spec.progressDeadlineSeconds', 'Invalid value: 5: must be greater than minReadySeconds'),
    ],
  );
  assert.deepEqual(
    deployments.createCauses(
      workload('Deployment', {
        selector: { matchLabels: { app: 'web' } },
        template: template(),
        strategy: { rollingUpdate: { maxUnavailable: '150%' } },
      }),
    ),
    [
      cause(
        'FieldValueInvalid',
        'spec.strategy.rollingUpdate.maxUnavailable',
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
      ),
    ],
  );
  assert.deepEqual(deployments.createCauses(workload('Deployment', { selector: {}, template: template() })), [
    cause(
      'FieldValueInvalid',
      'spec.selector',
      'Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    ),
  ]);
  assert.deepEqual(
    deployments.createCauses(workload('Deployment', { selector: { matchLabels: { app: 'other' } }, template: template() })),
    [selectorMismatch('map[string]string{"app":"web"}')],
  );
});

test('a Deployment selector is immutable', () => {
  const old = workload('Deployment', { selector: { matchLabels: { app: 'web' } }, template: template() });
  assert.deepEqual(
    deployments.updateCauses(old, workload('Deployment', { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template() })),
    [],
  );
  assert.deepEqual(
    deployments.updateCauses(old, workload('Deployment', { selector: { matchLabels: { app: 'v2' } }, template: template({ app: 'v2' }) })),
    [
      cause(
        'FieldValueInvalid',
        'spec.selector',
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"v2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
      ),
    ],
  );
});

test('StatefulSet defaults and validation', () => {
  const out = statefulsets.defaulted(
    workload('StatefulSet', {
      serviceName: 'web',
      selector: { matchLabels: { app: 'web' } },
      template: template(),
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      ],
    }),
  );
  const spec = out.spec as Record<string, unknown>;
  assert.equal(spec.podManagementPolicy, 'OrderedReady');
  assert.deepEqual(spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
  assert.deepEqual(spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
  assert.equal(spec.replicas, 1);
  assert.equal(spec.revisionHistoryLimit, 10);
  assert.deepEqual(spec.volumeClaimTemplates, [
    {
      metadata: { creationTimestamp: null, name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
      status: { phase: 'Pending' },
    },
  ]);
  assert.deepEqual(
    statefulsets.createCauses(
      workload('StatefulSet', {
        podManagementPolicy: 'Sometimes',
        selector: { matchLabels: { app: 'web' } },
        template: template({ app: 'web' }, { containers: [container], activeDeadlineSeconds: 5 }),
      }),
    ),
    [
      cause('FieldValueInvalid', 'spec.podManagementPolicy', `Invalid value: "Sometimes": must be 'OrderedReady' or 'Parallel'`),
      cause(
        'FieldValueForbidden',
        'spec.template.spec.activeDeadlineSeconds',
        'Forbidden: activeDeadlineSeconds in StatefulSet is not Supported',
      ),
    ],
  );
  assert.deepEqual(
    statefulsets
      .createCauses(workload('StatefulSet', { selector: { matchLabels: { app: 'web' } }, template: template() }, 'Web.x'))
      .map((c) => c.field),
    ['metadata.name'],
  );
  const old = workload('StatefulSet', { serviceName: 'a', selector: { matchLabels: { app: 'web' } }, template: template() });
  assert.deepEqual(
    statefulsets.updateCauses(
      old,
      workload('StatefulSet', { serviceName: 'a', replicas: 5, selector: { matchLabels: { app: 'web' } }, template: template() }),
    ),
    [],
  );
  assert.deepEqual(
    statefulsets.updateCauses(
      old,
      workload('StatefulSet', { serviceName: 'b', selector: { matchLabels: { app: 'web' } }, template: template() }),
    ),
    [
      cause(
        'FieldValueForbidden',
        'spec',
        "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    ],
  );
});

test('DaemonSet defaults and validation', () => {
  const out = daemonsets.defaulted(workload('DaemonSet', { selector: { matchLabels: { app: 'web' } }, template: template() }));
  const spec = out.spec as Record<string, unknown>;
  assert.deepEqual(spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  assert.equal(spec.revisionHistoryLimit, 10);
  assert.deepEqual(out.status, { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
  assert.deepEqual(
    daemonsets.createCauses(
      workload('DaemonSet', {
        selector: { matchLabels: { app: 'web' } },
        template: template(),
        updateStrategy: { rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } },
      }),
    ),
    [
      cause(
        'FieldValueInvalid',
        'spec.updateStrategy.rollingUpdate.maxSurge',
        'Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
      ),
    ],
  );
  // a DaemonSet without selector matches nothing: only the mismatch is reported
  assert.deepEqual(daemonsets.createCauses(workload('DaemonSet', { template: template() })), [
    selectorMismatch('map[string]string{"app":"web"}'),
  ]);
});

test('ReplicaSet validation reuses the Deployment wording', () => {
  assert.deepEqual(replicasets.createCauses(workload('ReplicaSet', { selector: { matchLabels: {} }, template: template() })), [
    cause(
      'FieldValueInvalid',
      'spec.selector',
      'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    ),
  ]);
});

test('workload names that are not DNS labels draw kube-apiserver warnings', () => {
  const d = workload('Deployment', { selector: { matchLabels: { app: 'web' } }, template: template() }, 'web.v1');
  assert.deepEqual(deployments.strategy.warningsOnCreate(d, deployments.ctx), [
    'metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]',
  ]);
  assert.deepEqual(deployments.strategy.warningsOnCreate(workload('Deployment', {}, 'web'), deployments.ctx), []);
});
