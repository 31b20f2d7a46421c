// Valid objects as people write them pass defaulting and validation untouched by errors: a
// guard against false positives of the built-in kinds' validation.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { kind } from './testing/strategies.js';

const kitchenSinkPodSpec = {
  serviceAccountName: 'runner',
  priorityClassName: 'high',
  hostname: 'web-0',
  subdomain: 'web',
  nodeSelector: { 'kubernetes.io/os': 'linux' },
  securityContext: {
    runAsUser: 1000,
    runAsGroup: 3000,
    fsGroup: 2000,
    fsGroupChangePolicy: 'OnRootMismatch',
    seccompProfile: { type: 'RuntimeDefault' },
    supplementalGroups: [4000],
  },
  tolerations: [
    { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
    { operator: 'Exists' },
  ],
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a', 'b'] }] }],
      },
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 50, preference: { matchExpressions: [{ key: 'disk', operator: 'Exists' }] } },
      ],
    },
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } } },
      ],
    },
  },
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { app: 'web' } },
      minDomains: 2,
      matchLabelKeys: ['pod-template-hash'],
    },
  ],
  dnsPolicy: 'None',
  dnsConfig: {
    nameservers: ['10.96.0.10'],
    searches: ['svc.cluster.local', 'my_domain.example.'],
    options: [{ name: 'ndots', value: '2' }],
  },
  hostAliases: [{ ip: '127.0.0.1', hostnames: ['foo.local'] }],
  imagePullSecrets: [{ name: 'regcred' }],
  readinessGates: [{ conditionType: 'example.com/ready' }],
  initContainers: [
    { name: 'init', image: 'busybox:1.36', command: ['sh', '-c', 'true'], volumeMounts: [{ name: 'work', mountPath: '/work' }] },
    {
      name: 'sidecar',
      image: 'envoyproxy/envoy:v1.30',
      restartPolicy: 'Always',
      readinessProbe: { tcpSocket: { port: 'admin' } },
      ports: [{ name: 'admin', containerPort: 9901 }],
    },
  ],
  containers: [
    {
      name: 'app',
      image: 'registry.example.com:5000/team/app@sha256:' + 'b'.repeat(64),
      args: ['--port=8080'],
      workingDir: '/app',
      ports: [
        { name: 'http', containerPort: 8080, protocol: 'TCP' },
        { name: 'metrics', containerPort: 9090, hostPort: 9090, hostIP: '0.0.0.0' },
        { containerPort: 5353, protocol: 'UDP' },
      ],
      env: [
        { name: 'PLAIN', value: 'x' },
        { name: 'dotted.name-ok', value: 'relaxed names are allowed' },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'LABEL', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
        { name: 'PASS', valueFrom: { secretKeyRef: { name: 'db', key: 'password', optional: true } } },
        { name: 'CONF', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'app.yaml' } } },
      ],
      envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'cfg' } }, { secretRef: { name: 'db' } }],
      resources: {
        requests: { cpu: '250m', memory: '64Mi', 'ephemeral-storage': '1Gi' },
        limits: { cpu: '1', memory: '128Mi', 'hugepages-2Mi': '100Mi', 'nvidia.com/gpu': '1' },
      },
      volumeMounts: [
        { name: 'work', mountPath: '/work', subPath: 'app' },
        { name: 'conf', mountPath: '/etc/app', readOnly: true },
        { name: 'tok', mountPath: '/var/run/secrets/tokens', readOnly: true, recursiveReadOnly: 'IfPossible' },
        { name: 'info', mountPath: '/etc/podinfo' },
        { name: 'cache', mountPath: '/cache', mountPropagation: 'HostToContainer' },
      ],
      volumeDevices: [{ name: 'block', devicePath: '/dev/xvda' }],
      livenessProbe: {
        httpGet: { path: '/healthz', port: 'http', httpHeaders: [{ name: 'X-Probe', value: '1' }] },
        initialDelaySeconds: 5,
        periodSeconds: 5,
        terminationGracePeriodSeconds: 10,
      },
      readinessProbe: { grpc: { port: 9090, service: 'health' } },
      startupProbe: { exec: { command: ['cat', '/tmp/ready'] }, failureThreshold: 30 },
      lifecycle: { preStop: { sleep: { seconds: 5 } }, postStart: { exec: { command: ['true'] } } },
      securityContext: {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
      },
      resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
      stdin: true,
      tty: true,
    },
  ],
  volumes: [
    { name: 'work', emptyDir: { sizeLimit: '500Mi', medium: 'Memory' } },
    { name: 'conf', configMap: { name: 'cfg', items: [{ key: 'app.yaml', path: 'app.yaml', mode: 0o400 }], optional: true } },
    {
      name: 'tok',
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3600, audience: 'vault' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    },
    {
      name: 'info',
      downwardAPI: {
        items: [
          { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
          { path: 'cpu', resourceFieldRef: { containerName: 'app', resource: 'requests.cpu', divisor: '1m' } },
        ],
      },
    },
    { name: 'cache', hostPath: { path: '/var/cache/app', type: 'DirectoryOrCreate' } },
    { name: 'block', persistentVolumeClaim: { claimName: 'raw' } },
    { name: 'csi', csi: { driver: 'secrets-store.csi.k8s.io', readOnly: true, volumeAttributes: { secretProviderClass: 'x' } } },
    {
      name: 'scratch',
      ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } },
    },
    { name: 'nfs', nfs: { server: 'nfs.example.com', path: '/exports' } },
  ],
  terminationGracePeriodSeconds: 60,
  activeDeadlineSeconds: 3600,
  runtimeClassName: 'gvisor',
  preemptionPolicy: 'Never',
  overhead: { cpu: '100m' },
  os: { name: 'linux' },
  schedulingGates: [{ name: 'example.com/gate' }],
};

function noErrors(group: string, version: string, resource: string, o: KubeObject): void {
  const k = kind(group, version, resource);
  assert.deepEqual(k.createCauses(o), [], `${resource} ${o.metadata.name}`);
}

test('a kitchen-sink Pod and pod templates validate', () => {
  noErrors('', 'v1', 'pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'sink', labels: { app: 'web' } },
    spec: structuredClone(kitchenSinkPodSpec),
  });
  const templateSpec = { ...structuredClone(kitchenSinkPodSpec), activeDeadlineSeconds: undefined, restartPolicy: 'Always' };
  noErrors('apps', 'v1', 'deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'sink' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] },
      template: {
        metadata: { labels: { app: 'web', tier: 'front' }, annotations: { 'prometheus.io/scrape': 'true' } },
        spec: templateSpec,
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '10%' } },
      minReadySeconds: 5,
    },
  });
  noErrors('batch', 'v1', 'cronjobs', {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly' },
    spec: {
      schedule: '30 2 * * 1-5',
      timeZone: 'Europe/Berlin',
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 120,
      jobTemplate: {
        metadata: { labels: { job: 'nightly' } },
        spec: {
          backoffLimit: 2,
          ttlSecondsAfterFinished: 600,
          completionMode: 'Indexed',
          completions: 3,
          parallelism: 3,
          backoffLimitPerIndex: 1,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
          podFailurePolicy: {
            rules: [
              { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
              { action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } },
            ],
          },
        },
      },
    },
  });
});

test('typical networking, autoscaling, policy and storage objects validate', () => {
  noErrors('networking.k8s.io', 'v1', 'ingresses', {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', annotations: { 'nginx.ingress.kubernetes.io/rewrite-target': '/' } },
    spec: {
      ingressClassName: 'nginx',
      tls: [{ hosts: ['example.com', '*.example.com'], secretName: 'tls' }],
      rules: [
        {
          host: 'example.com',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
              { path: '/api', pathType: 'Exact', backend: { service: { name: 'api', port: { name: 'http' } } } },
              {
                pathType: 'ImplementationSpecific',
                backend: { resource: { apiGroup: 'k8s.example.com', kind: 'StorageBucket', name: 'static' } },
              },
            ],
          },
        },
        {
          host: '*.example.com',
          http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] },
        },
      ],
    },
  });
  noErrors('networking.k8s.io', 'v1', 'networkpolicies', {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'db' },
    spec: {
      podSelector: { matchLabels: { role: 'db' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        {
          from: [
            { ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } },
            { namespaceSelector: { matchLabels: { project: 'x' } }, podSelector: { matchLabels: { role: 'fe' } } },
          ],
          ports: [
            { protocol: 'TCP', port: 6379 },
            { port: 32000, endPort: 32768 },
          ],
        },
      ],
      egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/24' } }], ports: [{ protocol: 'UDP', port: 53 }] }],
    },
  });
  noErrors('autoscaling', 'v2', 'horizontalpodautoscalers', {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
        { type: 'Pods', pods: { metric: { name: 'packets-per-second' }, target: { type: 'AverageValue', averageValue: '1k' } } },
        {
          type: 'Object',
          object: {
            metric: { name: 'requests-per-second' },
            describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'main' },
            target: { type: 'Value', value: '10k' },
          },
        },
        {
          type: 'External',
          external: {
            metric: { name: 'queue', selector: { matchLabels: { queue: 'worker' } } },
            target: { type: 'AverageValue', averageValue: '30' },
          },
        },
        {
          type: 'ContainerResource',
          containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 60 } },
        },
      ],
      behavior: {
        scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }], selectPolicy: 'Min' },
      },
    },
  });
  noErrors('policy', 'v1', 'poddisruptionbudgets', {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web' },
    spec: { maxUnavailable: '25%', selector: { matchLabels: { app: 'web' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
  });
  noErrors('apps', 'v1', 'statefulsets', {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db' },
    spec: {
      serviceName: 'db',
      replicas: 3,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'pg', image: 'postgres:16' }] } },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '10Gi' } } },
        },
      ],
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
      ordinals: { start: 1 },
    },
  });
  noErrors('', 'v1', 'persistentvolumes', {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv1' },
    spec: {
      capacity: { storage: '5Gi' },
      accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      persistentVolumeReclaimPolicy: 'Recycle',
      storageClassName: 'slow',
      nfs: { path: '/tmp', server: '172.17.0.2' },
      mountOptions: ['hard', 'nfsvers=4.1'],
    },
  });
  noErrors('discovery.k8s.io', 'v1', 'endpointslices', {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 80, appProtocol: 'http' }],
    endpoints: [{ addresses: ['10.1.2.3'], conditions: { ready: true }, hostname: 'pod-1', nodeName: 'node-1', zone: 'us-west2-a' }],
  });
  noErrors('storage.k8s.io', 'v1', 'storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'fast' },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'WaitForFirstConsumer',
    allowVolumeExpansion: true,
    parameters: { type: 'pd-ssd' },
  });
  noErrors('coordination.k8s.io', 'v1', 'leases', {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'leader' },
    spec: {
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2025-01-01T00:00:00.000000Z',
      renewTime: '2025-01-01T00:00:10.000000Z',
      leaseTransitions: 0,
    },
  });
});
