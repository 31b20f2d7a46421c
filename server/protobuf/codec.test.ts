import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeObject,
  decodeWatchEvents,
  encodeList,
  encodeListHead,
  encodeListItem,
  encodeObject,
  encodeObjectHead,
  encodeWatchEvent,
  hasListPieces,
  hasProtobufMessage,
  PROTOBUF_MAGIC,
  ProtobufError,
  sharesListItemBytes,
  type JsonObject,
} from './codec.js';
import { Writer } from './wire.js';

const core = (kind: string) => ({ group: '', version: 'v1', kind });

function roundTrip(obj: JsonObject, gvk: { group: string; version: string; kind: string }): JsonObject {
  const bytes = encodeObject(obj, gvk);
  assert.deepEqual(bytes.subarray(0, 4), PROTOBUF_MAGIC);
  const decoded = decodeObject(bytes);
  assert.equal(decoded.kind, gvk.kind);
  assert.equal(decoded.apiVersion, gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`);
  return decoded.object;
}

const pod: JsonObject = {
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: {
    name: 'web-0',
    namespace: 'default',
    uid: '0b5c3f1e-3f2a-4f39-9d1e-2f0f7a1c2b3d',
    resourceVersion: '12345',
    generation: 2,
    creationTimestamp: '2024-05-01T10:00:00Z',
    deletionTimestamp: '2024-05-01T11:00:00Z',
    deletionGracePeriodSeconds: 0,
    labels: { app: 'web', 'app.kubernetes.io/name': 'web', tier: '' },
    annotations: { 'example.com/note': 'hello\nworld' },
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'a-b-c', controller: true, blockOwnerDeletion: false },
    ],
    finalizers: ['example.com/keep'],
    managedFields: [
      {
        manager: 'kubectl',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2024-05-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
      },
    ],
  },
  spec: {
    volumes: [
      { name: 'config', configMap: { name: 'web-config', defaultMode: 420, items: [{ key: 'a', path: 'a.txt', mode: 256 }] } },
      { name: 'secret', secret: { secretName: 'web-secret', optional: true } },
      { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      {
        name: 'projected',
        projected: {
          sources: [{ serviceAccountToken: { audience: 'api', expirationSeconds: 3600, path: 'token' } }],
          defaultMode: 420,
        },
      },
    ],
    initContainers: [{ name: 'init', image: 'busybox', command: ['sh', '-c', 'true'] }],
    containers: [
      {
        name: 'web',
        image: 'nginx:1.27',
        args: ['--port', '8080'],
        workingDir: '/srv',
        ports: [
          { name: 'http', containerPort: 8080, protocol: 'TCP' },
          { containerPort: 9090, hostPort: 9090, protocol: 'UDP' },
        ],
        envFrom: [{ configMapRef: { name: 'web-env' }, prefix: 'WEB_' }, { secretRef: { name: 'web-secret-env', optional: false } }],
        env: [
          { name: 'PLAIN', value: 'x' },
          { name: 'EMPTY' },
          { name: 'FROM_CM', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k', optional: true } } },
          { name: 'FROM_FIELD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
          { name: 'FROM_RES', valueFrom: { resourceFieldRef: { containerName: 'web', resource: 'limits.cpu', divisor: '1m' } } },
        ],
        resources: {
          limits: { cpu: '500m', memory: '128Mi', 'nvidia.com/gpu': '1' },
          requests: { cpu: '250m', memory: '64Mi' },
        },
        volumeMounts: [{ name: 'config', mountPath: '/etc/web', readOnly: true, subPath: 'conf' }],
        livenessProbe: {
          httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: '1' }] },
          initialDelaySeconds: 5,
          periodSeconds: 10,
          failureThreshold: 3,
        },
        readinessProbe: { tcpSocket: { port: 8080 }, timeoutSeconds: 1 },
        startupProbe: { exec: { command: ['cat', '/tmp/ready'] }, terminationGracePeriodSeconds: 0 },
        lifecycle: { preStop: { sleep: { seconds: 3 } } },
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'IfNotPresent',
        securityContext: {
          runAsUser: 1000,
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        },
        stdin: true,
        tty: true,
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    activeDeadlineSeconds: 600,
    dnsPolicy: 'ClusterFirst',
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    serviceAccountName: 'web',
    automountServiceAccountToken: false,
    nodeName: 'node-1',
    hostNetwork: true,
    securityContext: {
      fsGroup: 2000,
      runAsGroup: -1,
      supplementalGroups: [1, 2, 3],
      sysctls: [{ name: 'net.core.somaxconn', value: '1024' }],
    },
    imagePullSecrets: [{ name: 'registry' }],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }],
        },
      },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' } },
        ],
      },
    },
    schedulerName: 'default-scheduler',
    tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    hostAliases: [{ ip: '10.0.0.1', hostnames: ['db'] }],
    priority: 0,
    enableServiceLinks: true,
    overhead: { cpu: '10m' },
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } },
    ],
  },
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-05-01T10:00:05Z' }],
    hostIP: '192.168.1.10',
    hostIPs: [{ ip: '192.168.1.10' }],
    podIP: '10.244.0.5',
    podIPs: [{ ip: '10.244.0.5' }, { ip: 'fd00::5' }],
    startTime: '2024-05-01T10:00:01Z',
    containerStatuses: [
      {
        name: 'web',
        state: { running: { startedAt: '2024-05-01T10:00:02Z' } },
        lastState: {
          terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: '2024-05-01T09:00:00Z', finishedAt: '2024-05-01T09:59:59Z' },
        },
        ready: true,
        restartCount: 1,
        image: 'nginx:1.27',
        imageID: 'docker-pullable://nginx@sha256:abc',
        containerID: 'containerd://abc',
        started: true,
      },
    ],
    qosClass: 'Burstable',
  },
};

describe('protobuf codec: round trips through the enveloped form', () => {
  it('a Pod with quantities, int-or-string ports, times, maps, volumes, env, probes and security contexts', () => {
    const out = roundTrip(pod, core('Pod'));
    assert.deepEqual(out, pod);
    assert.deepEqual(Object.keys(out), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  });

  it('a Secret: data bytes (not UTF-8) stay base64, stringData and immutable survive', () => {
    const secret: JsonObject = {
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { name: 's', namespace: 'default' },
      immutable: false,
      data: { bin: Buffer.from([0, 255, 128, 10]).toString('base64'), empty: '', text: Buffer.from('hello').toString('base64') },
      stringData: { plain: 'value' },
      type: 'Opaque',
    };
    assert.deepEqual(roundTrip(secret, core('Secret')), secret);
  });

  it('a Deployment: replicas 0 (a pointer) survives, int-or-string max surge and unavailable', () => {
    const deployment: JsonObject = {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'd', namespace: 'ns', labels: { app: 'd' } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'd' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] },
        template: {
          metadata: { labels: { app: 'd' } },
          spec: { containers: [{ name: 'c', image: 'nginx', resources: {} }] },
        },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
        paused: true,
      },
      status: {
        observedGeneration: 3,
        replicas: 2,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            lastUpdateTime: '2024-01-01T00:00:00Z',
            lastTransitionTime: '2024-01-01T00:00:00Z',
            reason: 'MinimumReplicasAvailable',
            message: 'ok',
          },
        ],
      },
    };
    assert.deepEqual(roundTrip(deployment, { group: 'apps', version: 'v1', kind: 'Deployment' }), deployment);
  });

  it('a Namespace and a ConfigMap with binaryData', () => {
    const ns: JsonObject = {
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'x' },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    };
    assert.deepEqual(roundTrip(ns, core('Namespace')), ns);
    const cm: JsonObject = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'c', namespace: 'default' },
      data: { 'a.txt': 'line1\nline2', unicode: 'héllo ✓' },
      binaryData: { blob: Buffer.from([1, 2, 3]).toString('base64') },
    };
    assert.deepEqual(roundTrip(cm, core('ConfigMap')), cm);
  });

  it('a Service: clusterIPs, externalIPs, ipFamilies (JSON names that differ in case from Go names), ports with named target ports', () => {
    const svc: JsonObject = {
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { name: 'svc', namespace: 'default' },
      spec: {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80, targetPort: 'http', nodePort: 30080 },
          { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: 9091, appProtocol: 'http' },
        ],
        selector: { app: 'web' },
        clusterIP: '10.0.0.10',
        clusterIPs: ['10.0.0.10', 'fd00::10'],
        type: 'NodePort',
        externalIPs: ['1.2.3.4'],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 31000,
        ipFamilies: ['IPv4', 'IPv6'],
        ipFamilyPolicy: 'PreferDualStack',
        internalTrafficPolicy: 'Cluster',
        allocateLoadBalancerNodePorts: false,
      },
      status: { loadBalancer: { ingress: [{ ip: '5.6.7.8', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP' }] }] } },
    };
    assert.deepEqual(roundTrip(svc, core('Service')), svc);
  });

  it('Events: MicroTime keeps microseconds (core/v1 and events.k8s.io/v1), a Lease its renew time', () => {
    const event: JsonObject = {
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: 'e.1', namespace: 'default' },
      involvedObject: {
        kind: 'Pod',
        namespace: 'default',
        name: 'p',
        uid: 'u',
        apiVersion: 'v1',
        resourceVersion: '1',
        fieldPath: 'spec.containers{c}',
      },
      reason: 'Started',
      message: 'Started container',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2024-05-01T10:00:00Z',
      lastTimestamp: '2024-05-01T10:00:10Z',
      count: 2,
      type: 'Normal',
      eventTime: '2024-05-01T10:00:00.123456Z',
      series: { count: 2, lastObservedTime: '2024-05-01T10:00:10.000001Z' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
    };
    assert.deepEqual(roundTrip(event, core('Event')), event);
    const newEvent: JsonObject = {
      kind: 'Event',
      apiVersion: 'events.k8s.io/v1',
      metadata: { name: 'e.2', namespace: 'default' },
      eventTime: '2024-05-01T10:00:00.000000Z',
      reportingController: 'example.com/ctl',
      reportingInstance: 'ctl-1',
      action: 'Reconcile',
      reason: 'Done',
      regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
      note: 'done',
      type: 'Normal',
    };
    assert.deepEqual(roundTrip(newEvent, { group: 'events.k8s.io', version: 'v1', kind: 'Event' }), newEvent);
    const lease: JsonObject = {
      kind: 'Lease',
      apiVersion: 'coordination.k8s.io/v1',
      metadata: { name: 'l', namespace: 'kube-system' },
      spec: {
        holderIdentity: 'a',
        leaseDurationSeconds: 15,
        acquireTime: '2024-05-01T10:00:00.500000Z',
        renewTime: '2024-05-01T10:00:05.999999Z',
        leaseTransitions: 0,
      },
    };
    assert.deepEqual(roundTrip(lease, { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' }), lease);
  });

  it('MicroTime input with nanoseconds or an offset is normalised to UTC microseconds; Time to UTC seconds', () => {
    const event: JsonObject = {
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: 'e', namespace: 'default', creationTimestamp: '2024-05-01T12:00:00.9+02:00' },
      involvedObject: {},
      eventTime: '2024-05-01T12:00:00.123456789+02:00',
    };
    const out = roundTrip(event, core('Event'));
    assert.equal(out.eventTime, '2024-05-01T10:00:00.123456Z');
    assert.equal((out.metadata as JsonObject).creationTimestamp, '2024-05-01T10:00:00Z');
  });

  it('large nested messages (multi-byte lengths) and multi-byte UTF-8', () => {
    const cm: JsonObject = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'big', annotations: { note: 'ü'.repeat(200) } },
      data: { big: 'x'.repeat(70_000), small: '✓' },
    };
    assert.deepEqual(roundTrip(cm, core('ConfigMap')), cm);
  });

  it('a ControllerRevision keeps its RawExtension data as embedded JSON', () => {
    const rev: JsonObject = {
      kind: 'ControllerRevision',
      apiVersion: 'apps/v1',
      metadata: { name: 'r-1', namespace: 'default' },
      data: { spec: { template: { $patch: 'replace', spec: { containers: [{ name: 'c', image: 'x' }] } } }, list: [1, 'two', null, true] },
      revision: 1,
    };
    assert.deepEqual(roundTrip(rev, { group: 'apps', version: 'v1', kind: 'ControllerRevision' }), rev);
  });

  it('Go named slices (Verbs, ExtraValue) and capitalised Go field names (webhooks, variables)', () => {
    const resources: JsonObject = {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'v1',
      resources: [
        {
          name: 'pods',
          singularName: 'pod',
          namespaced: true,
          kind: 'Pod',
          verbs: ['get', 'list'],
          shortNames: ['po'],
          categories: ['all'],
        },
      ],
    };
    assert.deepEqual(roundTrip(resources, core('APIResourceList')), resources);
    const sar: JsonObject = {
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: {},
      spec: {
        user: 'alice',
        groups: ['dev'],
        extra: { scopes: ['a', 'b'] },
        uid: '1',
        resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'x' },
      },
      status: { allowed: true, reason: 'ok' },
    };
    assert.deepEqual(roundTrip(sar, { group: 'authorization.k8s.io', version: 'v1', kind: 'SubjectAccessReview' }), sar);
    const hooks: JsonObject = {
      kind: 'ValidatingWebhookConfiguration',
      apiVersion: 'admissionregistration.k8s.io/v1',
      metadata: { name: 'w' },
      webhooks: [
        {
          name: 'w.example.com',
          clientConfig: { url: 'https://example.com', caBundle: Buffer.from('ca').toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 5,
        },
      ],
    };
    assert.deepEqual(
      roundTrip(hooks, { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration' }),
      hooks,
    );
    const policy: JsonObject = {
      kind: 'ValidatingAdmissionPolicy',
      apiVersion: 'admissionregistration.k8s.io/v1',
      metadata: { name: 'p' },
      spec: { variables: [{ name: 'v', expression: 'object.x' }], validations: [{ expression: 'true', message: 'm' }] },
    };
    assert.deepEqual(
      roundTrip(policy, { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingAdmissionPolicy' }),
      policy,
    );
  });

  it('Status errors (v1 and under any group version) and DeleteOptions', () => {
    const status: JsonObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "x" not found',
      reason: 'NotFound',
      details: { name: 'x', kind: 'pods', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'spec' }], retryAfterSeconds: 1 },
      code: 404,
    };
    assert.deepEqual(roundTrip(status, core('Status')), status);
    const options: JsonObject = {
      kind: 'DeleteOptions',
      apiVersion: 'meta.k8s.io/v1',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u', resourceVersion: '7' },
      orphanDependents: false,
      propagationPolicy: 'Foreground',
      dryRun: ['All'],
    };
    assert.deepEqual(roundTrip(options, { group: 'meta.k8s.io', version: 'v1', kind: 'DeleteOptions' }), options);
    const appsOptions = decodeObject(encodeObject(options, { group: 'apps', version: 'v1', kind: 'DeleteOptions' }));
    assert.equal(appsOptions.apiVersion, 'apps/v1');
    assert.equal((appsOptions.object.preconditions as JsonObject).uid, 'u');
  });

  it('a list: ListMeta and items (items carry no kind/apiVersion in protobuf)', () => {
    const list: JsonObject = {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '99', continue: 'tok', remainingItemCount: 0 },
      items: [
        { metadata: { name: 'a', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }] }, status: {} },
        { metadata: { name: 'b', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }] }, status: { phase: 'Pending' } },
      ],
    };
    const bytes = encodeList(list, core('PodList'));
    assert.deepEqual(decodeObject(bytes).object, list);
    const withKinds = { ...list, items: (list.items as JsonObject[]).map((i) => ({ kind: 'Pod', apiVersion: 'v1', ...i })) };
    assert.deepEqual(decodeObject(encodeList(withKinds, core('PodList'))).object, list);
    assert.throws(() => encodeList(list, core('Pod')), ProtobufError);
  });

  it('a list in pieces (head, then each item) is byte for byte the list encoded whole', () => {
    const big = { ...pod, metadata: { ...(pod.metadata as JsonObject), annotations: { note: 'x'.repeat(20_000) } } };
    const small = { metadata: { name: 'a', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }] }, status: {} };
    const cases: JsonObject[] = [
      {
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '99', continue: 'tok', remainingItemCount: 3 },
        items: [small, big, pod],
      },
      { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] },
      // a raw part over 127 bytes made of many small items: its length is a multi-byte varint
      { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: Array.from({ length: 40 }, () => small) },
    ];
    for (const list of cases) {
      const items = (list.items as JsonObject[]).map((item) => encodeListItem(item, core('PodList')));
      const length = items.reduce((sum, b) => sum + b.length, 0);
      const pieces = Buffer.concat([encodeListHead(list, core('PodList'), length), ...items]);
      assert.deepEqual(pieces, encodeList(list, core('PodList')));
    }
    // an item's bytes are also the raw part of its own envelope
    assert.equal(sharesListItemBytes(core('Pod'), core('PodList')), true);
    assert.deepEqual(Buffer.concat([encodeObjectHead(core('Pod')), encodeListItem(pod, core('PodList'))]), encodeObject(pod, core('Pod')));
    assert.equal(sharesListItemBytes(core('ConfigMap'), core('PodList')), false);
    assert.equal(hasListPieces(core('PodList')), true);
    assert.equal(hasListPieces(core('Pod')), false);
    assert.equal(hasListPieces({ group: 'example.com', version: 'v1', kind: 'WidgetList' }), false);
    assert.throws(() => encodeListItem(pod, core('Pod')), ProtobufError);
  });

  it('watch events: length-prefixed WatchEvent frames without envelope, objects enveloped inside', () => {
    const cm: JsonObject = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'c', namespace: 'default', resourceVersion: '5' },
      data: { a: 'b' },
    };
    const added = encodeWatchEvent('ADDED', cm, core('ConfigMap'));
    assert.equal(added.readUInt32BE(0), added.length - 4);
    // the frame is a bare metav1.WatchEvent: field 1 (type) first, no k8s\0 prefix
    assert.equal(added[4], 0x0a);
    assert.ok(added.indexOf(PROTOBUF_MAGIC) > 4);
    const bookmark = encodeWatchEvent(
      'BOOKMARK',
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '9' } },
      core('ConfigMap'),
    );
    const error = encodeWatchEvent(
      'ERROR',
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'too old resource version: 1 (5)',
        reason: 'Expired',
        code: 410,
      },
      core('Status'),
    );
    const stream = Buffer.concat([added, bookmark, error, error.subarray(0, 6)]);
    const { events, rest } = decodeWatchEvents(stream);
    assert.deepEqual(
      events.map((e) => [e.type, e.kind]),
      [
        ['ADDED', 'ConfigMap'],
        ['BOOKMARK', 'ConfigMap'],
        ['ERROR', 'Status'],
      ],
    );
    assert.deepEqual(events[0].object, cm);
    assert.deepEqual(events[1].object, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '9' } });
    assert.equal(events[2].object.code, 410);
    assert.equal(rest.length, 6);
  });
});

describe('protobuf codec: Go semantics when decoding', () => {
  /** a Go-encoded ObjectMeta/PodSpec writes every non-pointer scalar: build one by hand */
  function goStylePod(): Buffer {
    const meta = new Writer();
    for (const [n, v] of [
      [1, 'p'],
      [2, ''],
      [3, ''],
      [4, ''],
      [5, ''],
      [6, ''],
    ] as const) {
      meta.tag(n, 2);
      meta.string(v);
    }
    meta.tag(7, 0);
    meta.varint(0); // generation 0
    meta.tag(8, 2);
    meta.bytes(Buffer.alloc(0)); // zero creationTimestamp
    const container = new Writer();
    container.tag(1, 2);
    container.string('c');
    container.tag(2, 2);
    container.string('');
    container.tag(16, 0);
    container.varint(0); // stdin false
    const spec = new Writer();
    spec.tag(2, 2);
    spec.bytes(container.finish());
    spec.tag(4, 0);
    spec.varint(0n); // terminationGracePeriodSeconds: a pointer set to 0
    spec.tag(10, 2);
    spec.string(''); // nodeName ''
    spec.tag(11, 0);
    spec.varint(0); // hostNetwork false
    const podBody = new Writer();
    podBody.tag(1, 2);
    podBody.bytes(meta.finish());
    podBody.tag(2, 2);
    podBody.bytes(spec.finish());
    podBody.tag(3, 2);
    podBody.bytes(Buffer.alloc(0));
    const typeMeta = new Writer();
    typeMeta.tag(1, 2);
    typeMeta.string('v1');
    typeMeta.tag(2, 2);
    typeMeta.string('Pod');
    const unknown = new Writer();
    unknown.raw(PROTOBUF_MAGIC);
    unknown.tag(1, 2);
    unknown.bytes(typeMeta.finish());
    unknown.tag(2, 2);
    unknown.bytes(podBody.finish());
    unknown.tag(3, 2);
    unknown.string('');
    unknown.tag(4, 2);
    unknown.string('');
    return unknown.finish();
  }

  it('zero values of omitempty fields drop; pointers and fields without omitempty keep them; zero times vanish', () => {
    const { object } = decodeObject(goStylePod());
    assert.deepEqual(object, {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p' },
      // Container.image is omitempty; Container.name is not
      spec: { containers: [{ name: 'c' }], terminationGracePeriodSeconds: 0 },
      status: {},
    });
  });

  it('negative int32/int64 use ten-byte varints; packed repeated varints decode', () => {
    const out = roundTrip(
      {
        kind: 'Pod',
        apiVersion: 'v1',
        metadata: { name: 'n' },
        spec: { containers: [], securityContext: { runAsUser: -5, fsGroup: -1 }, priority: -2147483648 },
      },
      core('Pod'),
    );
    assert.deepEqual(out.spec, { securityContext: { runAsUser: -5, fsGroup: -1 }, priority: -2147483648 });
    // PodSecurityContext.supplementalGroups (field 4) packed
    const packed = new Writer();
    for (const g of [1, 300, 70000]) packed.varint(g);
    const psc = new Writer();
    psc.tag(4, 2);
    psc.bytes(packed.finish());
    const spec = new Writer();
    spec.tag(14, 2);
    spec.bytes(psc.finish());
    const body = new Writer();
    body.tag(2, 2);
    body.bytes(spec.finish());
    const typeMeta = new Writer();
    typeMeta.tag(1, 2);
    typeMeta.string('v1');
    typeMeta.tag(2, 2);
    typeMeta.string('Pod');
    const env = new Writer();
    env.raw(PROTOBUF_MAGIC);
    env.tag(1, 2);
    env.bytes(typeMeta.finish());
    env.tag(2, 2);
    env.bytes(body.finish());
    assert.deepEqual(decodeObject(env.finish()).object.spec, { securityContext: { supplementalGroups: [1, 300, 70000] } });
  });

  it('an envelope without kind/apiVersion takes the defaults (the request URL)', () => {
    const full = encodeObject({ metadata: { name: 'x' } }, core('Namespace'));
    // rebuild with an empty typeMeta
    const body = new Writer();
    body.raw(PROTOBUF_MAGIC);
    body.tag(1, 2);
    body.bytes(Buffer.alloc(0));
    body.tag(2, 2);
    const raw = decodeRaw(full);
    body.bytes(raw);
    const bare = body.finish();
    assert.throws(() => decodeObject(bare), /Kind/);
    assert.deepEqual(decodeObject(bare, core('Namespace')).object, { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'x' } });
  });

  it('rejects bad prefixes, empty bodies, custom resources and truncated data', () => {
    assert.throws(() => decodeObject(Buffer.from('{"kind":"Pod"}')), /does not appear to be a protobuf message/);
    assert.throws(() => decodeObject(Buffer.alloc(0)), ProtobufError);
    assert.throws(() => decodeObject(PROTOBUF_MAGIC), ProtobufError);
    const good = encodeObject({ metadata: { name: 'x' } }, core('Namespace'));
    assert.throws(() => decodeObject(good.subarray(0, good.length - 3)), ProtobufError);
    const crd = { group: 'example.com', version: 'v1', kind: 'Widget' };
    assert.equal(hasProtobufMessage(crd), false);
    assert.equal(hasProtobufMessage({ group: 'example.com', version: 'v1', kind: 'Status' }), true);
    assert.equal(hasProtobufMessage({ group: 'meta.k8s.io', version: 'v1', kind: 'Table' }), false);
    assert.throws(() => encodeObject({ metadata: { name: 'w' } }, crd), ProtobufError);
  });
});

/** the raw field of an envelope */
function decodeRaw(bytes: Buffer): Buffer {
  // magic, tag 0x0a, typeMeta length, typeMeta, tag 0x12, raw length, raw (short messages: 1-byte lengths)
  let pos = 4;
  assert.equal(bytes[pos++], 0x0a);
  pos += 1 + bytes[pos];
  assert.equal(bytes[pos++], 0x12);
  const length = bytes[pos++];
  return bytes.subarray(pos, pos + length);
}
