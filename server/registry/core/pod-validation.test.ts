// Pod defaulting and validation against what kube-apiserver 1.33 answers (worked out from
// core/v1 SetDefaults_* and pkg/apis/core/validation).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { cause, kind } from '../testing/strategies.js';
import { defaultPullPolicy } from './pod-spec.js';

const pods = kind('', 'v1', 'pods');

function pod(spec: Record<string, unknown>, name = 'p'): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec };
}

const dnsLabelMsg = (v: string) =>
  `Invalid value: "${v}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;

test('a minimal pod gets core/v1 defaults, in Go field order', () => {
  const out = pods.defaulted(pod({ containers: [{ name: 'web', image: 'nginx' }] }));
  assert.deepEqual(out.spec, {
    containers: [
      {
        name: 'web',
        image: 'nginx',
        resources: {},
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'Always',
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    securityContext: {},
    schedulerName: 'default-scheduler',
    enableServiceLinks: true,
  });
  assert.deepEqual(Object.keys(out.spec as object), [
    'containers',
    'restartPolicy',
    'terminationGracePeriodSeconds',
    'dnsPolicy',
    'securityContext',
    'schedulerName',
    'enableServiceLinks',
  ]);
  assert.deepEqual(out.status, { phase: 'Pending', qosClass: 'BestEffort' });
});

test('container, probe, port, volume and resource defaults', () => {
  const out = pods.defaulted(
    pod({
      containers: [
        {
          name: 'c',
          image: 'example.com/app:v1',
          ports: [{ containerPort: 80 }],
          livenessProbe: { httpGet: { port: 80 } },
          readinessProbe: { grpc: { port: 9000 } },
          resources: { limits: { cpu: 0.5, memory: '1024Mi' } },
          env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
        },
      ],
      volumes: [
        { name: 'a', secret: { secretName: 's' } },
        { name: 'b', configMap: { name: 'c' } },
        { name: 'c' },
        { name: 'd', hostPath: { path: '/x' } },
        { name: 'e', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
      ],
    }),
  );
  const spec = out.spec as Record<string, any>;
  const c = spec.containers[0];
  assert.deepEqual(c.ports, [{ containerPort: 80, protocol: 'TCP' }]);
  assert.deepEqual(c.livenessProbe, {
    httpGet: { path: '/', port: 80, scheme: 'HTTP' },
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  });
  assert.deepEqual(c.readinessProbe.grpc, { port: 9000, service: '' });
  // a Pod's requests default to its limits; quantities come back canonical
  assert.deepEqual(c.resources, { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } });
  assert.deepEqual(c.env[0].valueFrom.fieldRef, { apiVersion: 'v1', fieldPath: 'spec.nodeName' });
  assert.equal(c.imagePullPolicy, 'IfNotPresent');
  assert.deepEqual(spec.volumes, [
    { name: 'a', secret: { secretName: 's', defaultMode: 420 } },
    { name: 'b', configMap: { name: 'c', defaultMode: 420 } },
    { name: 'c', emptyDir: {} },
    { name: 'd', hostPath: { path: '/x', type: '' } },
    { name: 'e', projected: { sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 3600 } }], defaultMode: 420 } },
  ]);
  assert.deepEqual(out.status, { phase: 'Pending', qosClass: 'Guaranteed' });
});

test('image pull policy follows the image reference as docker parses it', () => {
  assert.equal(defaultPullPolicy('nginx'), 'Always');
  assert.equal(defaultPullPolicy('nginx:latest'), 'Always');
  assert.equal(defaultPullPolicy('nginx:1.27'), 'IfNotPresent');
  assert.equal(defaultPullPolicy('localhost:5000/team/app'), 'Always');
  assert.equal(defaultPullPolicy('nginx@sha256:' + 'a'.repeat(64)), 'IfNotPresent');
  assert.equal(defaultPullPolicy('nginx:latest@sha256:' + 'a'.repeat(64)), 'Always');
  // not a valid reference: kube ignores the parse error and assumes IfNotPresent
  assert.equal(defaultPullPolicy('Nginx'), 'IfNotPresent');
  assert.equal(defaultPullPolicy(''), 'IfNotPresent');
});

test('invalid pods: one cause per problem, in kube-apiserver order', () => {
  const causes = pods.createCauses(
    pod({
      containers: [
        { name: 'a', image: '', ports: [{ containerPort: 70000, protocol: 'FOO' }] },
        {
          name: 'a',
          image: 'x',
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          resources: { requests: { cpu: '2' }, limits: { cpu: '1' } },
        },
        { name: 'Bad_Name', image: 'x', livenessProbe: { exec: { command: ['true'] }, successThreshold: 2 } },
      ],
      restartPolicy: 'Sometimes',
      dnsPolicy: 'Weird',
    }),
  );
  assert.deepEqual(causes, [
    cause('FieldValueRequired', 'spec.containers[0].image', 'Required value'),
    cause('FieldValueInvalid', 'spec.containers[0].ports[0].containerPort', 'Invalid value: 70000: must be between 1 and 65535, inclusive'),
    cause(
      'FieldValueNotSupported',
      'spec.containers[0].ports[0].protocol',
      'Unsupported value: "FOO": supported values: "SCTP", "TCP", "UDP"',
    ),
    cause('FieldValueNotFound', 'spec.containers[1].volumeMounts[0].name', 'Not found: "data"'),
    cause('FieldValueInvalid', 'spec.containers[1].resources.requests', 'Invalid value: "2": must be less than or equal to cpu limit of 1'),
    cause('FieldValueDuplicate', 'spec.containers[1].name', 'Duplicate value: "a"'),
    cause('FieldValueInvalid', 'spec.containers[2].name', dnsLabelMsg('Bad_Name')),
    cause('FieldValueInvalid', 'spec.containers[2].livenessProbe.successThreshold', 'Invalid value: 2: must be 1'),
    cause(
      'FieldValueNotSupported',
      'spec.restartPolicy',
      'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ),
    cause(
      'FieldValueNotSupported',
      'spec.dnsPolicy',
      'Unsupported value: "Weird": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    ),
  ]);
});

test('pod-level fields: containers required, volumes, tolerations, deadlines, names', () => {
  assert.deepEqual(pods.createCauses(pod({})), [cause('FieldValueRequired', 'spec.containers', 'Required value')]);
  const causes = pods.createCauses(
    pod({
      containers: [{ name: 'c', image: ' x' }],
      volumes: [
        { name: 'v', emptyDir: {} },
        { name: 'v', secret: { secretName: 's', defaultMode: 1000 }, configMap: { name: 'c' } },
      ],
      tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }, { operator: 'Equal' }],
      activeDeadlineSeconds: 0,
      serviceAccountName: 'Bad',
      nodeSelector: { 'a/b/c': 'x' },
    }),
  );
  assert.deepEqual(
    causes.map((c) => `${c.field}: ${c.message}`),
    [
      'spec.volumes[1].secret.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive',
      'spec.volumes[1].configMap: Forbidden: may not specify more than 1 volume type',
      'spec.volumes[1].name: Duplicate value: "v"',
      "spec.nodeSelector: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      `spec.serviceAccountName: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive',
      'spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'',
      'spec.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      'spec.containers[0].image: Invalid value: " x": must not have leading or trailing whitespace',
    ],
  );
});

test('pod updates may only change images and a few fields', () => {
  const old = pod({ containers: [{ name: 'c', image: 'a' }], activeDeadlineSeconds: 10, tolerations: [{ key: 'k', operator: 'Exists' }] });
  const spec = (extra: Record<string, unknown>) =>
    pod({ containers: [{ name: 'c', image: 'a' }], activeDeadlineSeconds: 10, tolerations: [{ key: 'k', operator: 'Exists' }], ...extra });
  assert.deepEqual(pods.updateCauses(old, spec({ containers: [{ name: 'c', image: 'b' }], activeDeadlineSeconds: 5 })), []);
  assert.deepEqual(
    pods.updateCauses(
      old,
      spec({
        tolerations: [
          { key: 'k', operator: 'Exists' },
          { key: 'x', operator: 'Exists' },
        ],
      }),
    ),
    [],
  );
  assert.deepEqual(
    pods.updateCauses(
      old,
      spec({
        containers: [
          { name: 'c', image: 'a' },
          { name: 'd', image: 'a' },
        ],
      }),
    ),
    [cause('FieldValueForbidden', 'spec.containers', 'Forbidden: pod updates may not add or remove containers')],
  );
  assert.deepEqual(pods.updateCauses(old, spec({ activeDeadlineSeconds: 20 })), [
    cause('FieldValueInvalid', 'spec.activeDeadlineSeconds', 'Invalid value: 20: must be less than or equal to previous value'),
  ]);
  assert.deepEqual(pods.updateCauses(old, spec({ tolerations: [] })), [
    cause('FieldValueForbidden', 'spec.tolerations', 'Forbidden: existing toleration can not be modified except its tolerationSeconds'),
  ]);
  const changed = pods.updateCauses(old, spec({ terminationGracePeriodSeconds: 5 }));
  assert.deepEqual(
    changed.map((c) => [c.reason, c.field]),
    [['FieldValueForbidden', 'spec']],
  );
  assert.ok(
    changed[0]?.message?.startsWith(
      'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n',
    ),
  );
});
