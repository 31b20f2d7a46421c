import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { defaultTableConvertor } from '../registry/printers/index.js';
import { tableConvertorFor } from '../registry/providers.js';
import { humanDuration, labelSelectorString } from '../registry/printers/helpers.js';
import { podSummary } from '../registry/printers/core.js';
import { toTable } from './table.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

function pod(spec: Record<string, unknown>, status: Record<string, unknown>, meta: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', creationTimestamp: ago(300), ...meta },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
    status,
  };
}

test('human durations as kubectl prints them', () => {
  const cases: [number, string][] = [
    [-5, '<invalid>'],
    [-0.5, '0s'],
    [0, '0s'],
    [59, '59s'],
    [119, '119s'],
    [120, '2m'],
    [150, '2m30s'],
    [600, '10m'],
    [3 * 3600 - 1, '179m'],
    [3 * 3600, '3h'],
    [3 * 3600 + 60 * 5, '3h5m'],
    [8 * 3600, '8h'],
    [47 * 3600, '47h'],
    [48 * 3600, '2d'],
    [50 * 3600, '2d2h'],
    [8 * 86400, '8d'],
    [400 * 86400, '400d'],
    [365 * 86400 * 2 + 86400 * 3, '2y3d'],
    [365 * 86400 * 9, '9y'],
  ];
  for (const [s, text] of cases) assert.equal(humanDuration(s * 1000), text, String(s));
});

test('label selectors print sorted, with set operators', () => {
  assert.equal(labelSelectorString({ matchLabels: { b: '2', a: '1' } }), 'a=1,b=2');
  assert.equal(
    labelSelectorString({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['z', 'a'] },
        { key: 'env', operator: 'DoesNotExist' },
        { key: 'gpu', operator: 'Exists' },
      ],
    }),
    'app=web,!env,gpu,tier in (a,z)',
  );
  assert.equal(labelSelectorString({}), '');
});

test('pod status: running, restarts with the time of the last one', () => {
  const s = podSummary(
    pod(
      {},
      {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          {
            name: 'c',
            ready: true,
            restartCount: 3,
            state: { running: {} },
            lastState: { terminated: { exitCode: 1, finishedAt: ago(90) } },
          },
        ],
      },
    ),
    NOW,
  );
  assert.deepEqual(s, { ready: '1/1', reason: 'Running', restarts: '3 (90s ago)' });
});

test('pod status: waiting reasons, init containers, sidecars, terminating', () => {
  const crash = podSummary(
    pod(
      {},
      {
        phase: 'Running',
        containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } }],
      },
    ),
    NOW,
  );
  assert.equal(crash.reason, 'CrashLoopBackOff');
  assert.equal(crash.ready, '0/1');

  const init = podSummary(
    pod(
      { initContainers: [{ name: 'i1' }, { name: 'i2' }] },
      {
        phase: 'Pending',
        initContainerStatuses: [
          { name: 'i1', state: { terminated: { exitCode: 0 } } },
          { name: 'i2', state: { running: {} } },
        ],
      },
    ),
    NOW,
  );
  assert.equal(init.reason, 'Init:1/2');

  const initFailed = podSummary(
    pod(
      { initContainers: [{ name: 'i1' }] },
      { phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 2 } } }] },
    ),
    NOW,
  );
  assert.equal(initFailed.reason, 'Init:ExitCode:2');

  const sidecar = podSummary(
    pod(
      { initContainers: [{ name: 'side', restartPolicy: 'Always' }] },
      {
        phase: 'Running',
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
        initContainerStatuses: [{ name: 'side', started: true, ready: true, state: { running: {} } }],
        containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }],
      },
    ),
    NOW,
  );
  assert.deepEqual([sidecar.ready, sidecar.reason], ['2/2', 'Running']);

  const terminating = podSummary(pod({}, { phase: 'Running' }, { deletionTimestamp: ago(1) }), NOW);
  assert.equal(terminating.reason, 'Terminating');
  const completed = podSummary(
    pod({}, { phase: 'Succeeded', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }),
    NOW,
  );
  assert.equal(completed.reason, 'Completed');
});

test('pod rows: wide cells and the completed condition', () => {
  const convertor = tableConvertorFor({ group: '', resource: 'pods' });
  assert.deepEqual(
    convertor.columns.map((c) => [c.name, c.priority]),
    [
      ['Name', 0],
      ['Ready', 0],
      ['Status', 0],
      ['Restarts', 0],
      ['Age', 0],
      ['IP', 1],
      ['Node', 1],
      ['Nominated Node', 1],
      ['Readiness Gates', 1],
    ],
  );
  const p = pod(
    { nodeName: 'n1', readinessGates: [{ conditionType: 'x/ready' }] },
    { phase: 'Succeeded', podIPs: [{ ip: '10.1.2.3' }], conditions: [{ type: 'x/ready', status: 'True' }] },
  );
  assert.deepEqual(convertor.cells(p, NOW), ['p', '0/1', 'Succeeded', '0', '5m', '10.1.2.3', 'n1', '<none>', '1/1']);
  assert.deepEqual(convertor.conditions?.(p), [
    { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
  ]);
});

test('kubectl-familiar columns of common resources', () => {
  const svc: KubeObject = {
    kind: 'Service',
    metadata: { name: 'web', creationTimestamp: ago(60) },
    spec: {
      type: 'NodePort',
      clusterIPs: ['10.0.0.10'],
      ports: [
        { port: 80, nodePort: 30080, protocol: 'TCP' },
        { port: 53, protocol: 'UDP' },
      ],
      selector: { app: 'web' },
    },
  };
  assert.deepEqual(tableConvertorFor({ group: '', resource: 'services' }).cells(svc, NOW), [
    'web',
    'NodePort',
    '10.0.0.10',
    '<none>',
    '80:30080/TCP,53/UDP',
    '60s',
    'app=web',
  ]);

  const deploy: KubeObject = {
    kind: 'Deployment',
    metadata: { name: 'd', creationTimestamp: ago(7200) },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'd' } },
      template: {
        spec: {
          containers: [
            { name: 'a', image: 'img:1' },
            { name: 'b', image: 'img:2' },
          ],
        },
      },
    },
    status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
  };
  assert.deepEqual(tableConvertorFor({ group: 'apps', resource: 'deployments' }).cells(deploy, NOW), [
    'd',
    '2/3',
    3,
    2,
    '120m',
    'a,b',
    'img:1,img:2',
    'app=d',
  ]);

  const node: KubeObject = {
    kind: 'Node',
    metadata: { name: 'n1', creationTimestamp: ago(86400 * 3), labels: { 'node-role.kubernetes.io/control-plane': '' } },
    spec: { unschedulable: true },
    status: {
      conditions: [{ type: 'Ready', status: 'False' }],
      nodeInfo: { kubeletVersion: 'v1.33.0' },
      addresses: [{ type: 'InternalIP', address: '192.168.1.2' }],
    },
  };
  assert.deepEqual(tableConvertorFor({ group: '', resource: 'nodes' }).cells(node, NOW).slice(0, 7), [
    'n1',
    'NotReady,SchedulingDisabled',
    'control-plane',
    '3d',
    'v1.33.0',
    '192.168.1.2',
    '<none>',
  ]);

  const job: KubeObject = {
    kind: 'Job',
    metadata: { name: 'j', creationTimestamp: ago(100) },
    spec: { completions: 2, template: { spec: { containers: [] } } },
    status: { succeeded: 2, startTime: ago(100), completionTime: ago(40), conditions: [{ type: 'Complete', status: 'True' }] },
  };
  assert.deepEqual(tableConvertorFor({ group: 'batch', resource: 'jobs' }).cells(job, NOW).slice(0, 5), [
    'j',
    'Complete',
    '2/2',
    '60s',
    '100s',
  ]);

  const cm: KubeObject = {
    kind: 'ConfigMap',
    metadata: { name: 'c', creationTimestamp: ago(5) },
    data: { a: '1', b: '2' },
    binaryData: { c: 'AA==' },
  };
  assert.deepEqual(tableConvertorFor({ group: '', resource: 'configmaps' }).cells(cm, NOW), ['c', 3, '5s']);

  const ev: KubeObject = {
    kind: 'Event',
    metadata: { name: 'e1', creationTimestamp: ago(30) },
    involvedObject: { kind: 'Pod', name: 'web' },
    type: 'Normal',
    reason: 'Pulled',
    message: ' pulled image \n',
    firstTimestamp: ago(30),
    lastTimestamp: ago(10),
    count: 2,
    source: { component: 'kubelet', host: 'n1' },
  };
  assert.deepEqual(tableConvertorFor({ group: '', resource: 'events' }).cells(ev, NOW), [
    '10s',
    'Normal',
    'Pulled',
    'pod/web',
    '',
    'kubelet, n1',
    'pulled image',
    '30s',
    2,
    'e1',
  ]);

  const rb: KubeObject = {
    kind: 'RoleBinding',
    metadata: { name: 'rb', creationTimestamp: ago(1) },
    roleRef: { kind: 'ClusterRole', name: 'view' },
    subjects: [
      { kind: 'User', name: 'alice' },
      { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
      { kind: 'Group', name: 'devs' },
    ],
  };
  assert.deepEqual(tableConvertorFor({ group: 'rbac.authorization.k8s.io', resource: 'rolebindings' }).cells(rb, NOW), [
    'rb',
    'ClusterRole/view',
    '1s',
    'alice',
    'devs',
    'ns/sa',
  ]);
});

test('resources without columns of their own get Name and Created At', () => {
  assert.equal(tableConvertorFor({ group: 'rbac.authorization.k8s.io', resource: 'roles' }), defaultTableConvertor);
  assert.equal(tableConvertorFor({ group: 'example.com', resource: 'widgets' }), defaultTableConvertor);
  const obj: KubeObject = { kind: 'Widget', metadata: { name: 'w', creationTimestamp: '2025-01-02T03:04:05Z', resourceVersion: '7' } };
  const table = toTable(obj, defaultTableConvertor, { includeObject: 'None', noHeaders: false });
  assert.deepEqual(table, {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: '7' },
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: defaultTableConvertor.columns[0].description, priority: 0 },
      { name: 'Created At', type: 'date', format: '', description: defaultTableConvertor.columns[1].description, priority: 0 },
    ],
    rows: [{ cells: ['w', '2025-01-02T03:04:05Z'], object: null }],
  });
});

test('list tables copy the list metadata', () => {
  const table = toTable(
    { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '9', continue: 'next', remainingItemCount: 4 }, items: [] },
    defaultTableConvertor,
    { includeObject: 'Metadata', noHeaders: true },
    'v1beta1',
  );
  assert.deepEqual(table.metadata, { resourceVersion: '9', continue: 'next', remainingItemCount: 4 });
  assert.equal(table.apiVersion, 'meta.k8s.io/v1beta1');
  assert.equal(table.columnDefinitions, null);
  assert.deepEqual(table.rows, []);
});
