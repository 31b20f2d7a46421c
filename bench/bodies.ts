// The request bodies of the benchmark, at the sizes the performance issue measured: a
// ConfigMap of 2271 bytes carrying 2 KiB of data, and a Deployment-owned Pod of 2463 bytes
// with probes, volumes and tolerations. Names have a fixed width so every body has its size.

export const CONFIGMAP_BYTES = 2271;
export const POD_BYTES = 2463;

/** fixed-width names, so that every body of a kind has the same size */
export const objectName = (prefix: string, i: number): string => `${prefix}-${String(i).padStart(6, '0')}`;

/** JSON of `build(pad)`, with the pad string grown until the body is exactly `size` bytes */
function padTo(size: number, build: (pad: string) => object): Buffer {
  const bare = Buffer.byteLength(JSON.stringify(build('')));
  if (bare > size) throw new Error(`body is ${bare} bytes before padding, more than ${size}`);
  const body = Buffer.from(JSON.stringify(build('p'.repeat(size - bare))));
  if (body.length !== size) throw new Error(`padded body is ${body.length} bytes, not ${size}`);
  return body;
}

function configMapObject(name: string, i: number, pad: string, resourceVersion?: string): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      ...(resourceVersion ? { resourceVersion } : {}),
      labels: { app: 'bench', shard: String(i % 16).padStart(2, '0') },
      annotations: { 'bench.kapi.io/pad': pad },
    },
    data: { 'payload.txt': 'x'.repeat(2048), seq: String(i).padStart(8, '0') },
  };
}

export function configMapBody(name: string, i: number): Buffer {
  return padTo(CONFIGMAP_BYTES, (pad) => configMapObject(name, i, pad));
}

/** the ConfigMap as a PUT body: `seq` changes, the resourceVersion is the one last seen */
export function configMapUpdateBody(name: string, seq: number, resourceVersion: string): Buffer {
  return Buffer.from(JSON.stringify(configMapObject(name, seq, 'p'.repeat(64), resourceVersion)));
}

export interface Owner {
  name: string;
  uid: string;
}

export function replicaSetBody(name: string): Buffer {
  const labels = { app: 'bench-pods', 'pod-template-hash': '7d4b9c8f6d' };
  return Buffer.from(
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, labels },
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } },
      },
    }),
  );
}

export function podBody(name: string, i: number, owner: Owner): Buffer {
  return padTo(POD_BYTES, (pad) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { app: 'bench-pods', 'pod-template-hash': '7d4b9c8f6d', shard: String(i % 16).padStart(2, '0') },
      annotations: { 'bench.kapi.io/pad': pad },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1.0',
          args: ['--port=8080', '--config=/etc/app/config.yaml'],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'INDEX', value: String(i).padStart(6, '0') },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
          livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, initialDelaySeconds: 10, periodSeconds: 10 },
          readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 5, failureThreshold: 3 },
          volumeMounts: [
            { name: 'config', mountPath: '/etc/app', readOnly: true },
            { name: 'cache', mountPath: '/var/cache/app' },
          ],
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      volumes: [
        { name: 'config', configMap: { name: 'app-config' } },
        { name: 'cache', emptyDir: { sizeLimit: '1Gi' } },
      ],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'dedicated', operator: 'Equal', value: 'bench', effect: 'NoSchedule' },
      ],
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: { labelSelector: { matchLabels: { app: 'bench-pods' } }, topologyKey: 'kubernetes.io/hostname' },
            },
          ],
        },
      },
      terminationGracePeriodSeconds: 30,
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 2000 },
    },
  }));
}
