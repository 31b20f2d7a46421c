// Defaulting and validation of the remaining built-in kinds against what kube-apiserver 1.33
// answers: one table per kind, exact causes (reason, field, message).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { cause, kind } from './testing/strategies.js';

function obj(apiVersion: string, k: string, body: Record<string, unknown>, name = 'x'): KubeObject {
  return { apiVersion, kind: k, metadata: { name }, ...body };
}

test('HorizontalPodAutoscaler v2: defaults and validation', () => {
  const hpas = kind('autoscaling', 'v2', 'horizontalpodautoscalers');
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  const out = hpas.defaulted(
    obj('autoscaling/v2', 'HorizontalPodAutoscaler', {
      spec: { scaleTargetRef: ref, maxReplicas: 3, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } },
    }),
  );
  assert.deepEqual(out.spec, {
    scaleTargetRef: ref,
    minReplicas: 1,
    maxReplicas: 3,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
    behavior: {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    },
  });
  assert.deepEqual(
    hpas.createCauses(obj('autoscaling/v2', 'HorizontalPodAutoscaler', { spec: { scaleTargetRef: ref, minReplicas: 0, maxReplicas: 0 } })),
    [
      cause('FieldValueInvalid', 'spec.minReplicas', 'Invalid value: 0: must be greater than or equal to 1'),
      cause('FieldValueInvalid', 'spec.maxReplicas', 'Invalid value: 0: must be greater than 0'),
    ],
  );
  assert.deepEqual(
    hpas.createCauses(obj('autoscaling/v2', 'HorizontalPodAutoscaler', { spec: { scaleTargetRef: ref, minReplicas: 5, maxReplicas: 2 } })),
    [cause('FieldValueInvalid', 'spec.maxReplicas', 'Invalid value: 2: must be greater than or equal to `minReplicas`')],
  );
  assert.deepEqual(
    hpas.createCauses(
      obj('autoscaling/v2', 'HorizontalPodAutoscaler', {
        spec: {
          scaleTargetRef: ref,
          maxReplicas: 2,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } }],
        },
      }),
    ),
    [cause('FieldValueInvalid', 'spec.metrics[0].resource.target.averageUtilization', 'Invalid value: 0: must be greater than 0')],
  );
  assert.deepEqual(
    hpas.createCauses(obj('autoscaling/v2', 'HorizontalPodAutoscaler', { spec: { scaleTargetRef: { name: 'web' }, maxReplicas: 2 } })),
    [cause('FieldValueRequired', 'spec.scaleTargetRef.kind', 'Required value')],
  );
});

test('PodDisruptionBudget: exclusive bounds, percents, zero status', () => {
  const pdbs = kind('policy', 'v1', 'poddisruptionbudgets');
  assert.deepEqual(pdbs.defaulted(obj('policy/v1', 'PodDisruptionBudget', { spec: { minAvailable: 1 } })).status, {
    disruptionsAllowed: 0,
    currentHealthy: 0,
    desiredHealthy: 0,
    expectedPods: 0,
  });
  assert.deepEqual(pdbs.createCauses(obj('policy/v1', 'PodDisruptionBudget', { spec: { minAvailable: 1, maxUnavailable: '120%' } })), [
    cause(
      'FieldValueInvalid',
      'spec',
      'Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and maxUnavailable cannot be both set',
    ),
    cause(
      'FieldValueInvalid',
      'spec.maxUnavailable',
      'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%',
    ),
  ]);
  assert.deepEqual(
    pdbs.createCauses(obj('policy/v1', 'PodDisruptionBudget', { spec: { minAvailable: -1, unhealthyPodEvictionPolicy: 'Never' } })),
    [
      cause('FieldValueInvalid', 'spec.minAvailable', 'Invalid value: -1: must be greater than or equal to 0'),
      cause(
        'FieldValueNotSupported',
        'spec.unhealthyPodEvictionPolicy',
        'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
      ),
    ],
  );
});

test('NetworkPolicy: defaults and validation', () => {
  const nps = kind('networking.k8s.io', 'v1', 'networkpolicies');
  const out = nps.defaulted(obj('networking.k8s.io/v1', 'NetworkPolicy', { spec: { egress: [{ ports: [{ port: 53 }] }] } }));
  assert.deepEqual(out.spec, { podSelector: {}, egress: [{ ports: [{ port: 53, protocol: 'TCP' }] }], policyTypes: ['Ingress', 'Egress'] });
  assert.deepEqual(
    nps.createCauses(
      obj('networking.k8s.io/v1', 'NetworkPolicy', {
        spec: {
          podSelector: {},
          ingress: [
            {
              from: [{}, { ipBlock: { cidr: '10.0.0.0/8', except: ['192.168.0.0/16'] }, podSelector: {} }],
              ports: [{ port: 'http', endPort: 90 }],
            },
          ],
          policyTypes: ['Sideways'],
        },
      }),
    ),
    [
      cause('FieldValueInvalid', 'spec.ingress[0].ports[0].endPort', 'Invalid value: 90: may not be specified when `port` is non-numeric'),
      cause('FieldValueRequired', 'spec.ingress[0].from[0]', 'Required value: must specify a peer'),
      cause(
        'FieldValueInvalid',
        'spec.ingress[0].from[1].ipBlock.except[0]',
        'Invalid value: "192.168.0.0/16": must be a strict subset of `cidr`',
      ),
      cause('FieldValueForbidden', 'spec.ingress[0].from[1]', 'Forbidden: may not specify both ipBlock and another peer'),
      cause('FieldValueNotSupported', 'spec.policyTypes[0]', 'Unsupported value: "Sideways": supported values: "Ingress", "Egress"'),
    ],
  );
});

test('Ingress: pathType required, backends, hosts', () => {
  const ingresses = kind('networking.k8s.io', 'v1', 'ingresses');
  const backend = { service: { name: 'web', port: { number: 80 } } };
  assert.deepEqual(ingresses.defaulted(obj('networking.k8s.io/v1', 'Ingress', { spec: { defaultBackend: backend } })).status, {
    loadBalancer: {},
  });
  assert.deepEqual(ingresses.createCauses(obj('networking.k8s.io/v1', 'Ingress', { spec: {} })), [
    cause(
      'FieldValueInvalid',
      'spec',
      'Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified',
    ),
  ]);
  assert.deepEqual(
    ingresses.createCauses(
      obj('networking.k8s.io/v1', 'Ingress', {
        spec: {
          rules: [
            { host: '1.2.3.4', http: { paths: [{ path: '/', backend }] } },
            {
              host: '*.example.com',
              http: { paths: [{ path: 'api', pathType: 'Prefix', backend: { service: { name: 'web', port: {} } } }] },
            },
          ],
        },
      }),
    ),
    [
      cause('FieldValueInvalid', 'spec.rules[0].host', 'Invalid value: "1.2.3.4": must be a DNS name, not an IP address'),
      cause('FieldValueRequired', 'spec.rules[0].http.paths[0].pathType', 'Required value: pathType must be specified'),
      cause('FieldValueInvalid', 'spec.rules[1].http.paths[0].path', 'Invalid value: "api": must be an absolute path'),
      cause('FieldValueRequired', 'spec.rules[1].http.paths[0].backend', 'Required value: port name or number is required'),
    ],
  );
});

test('Lease, EndpointSlice, Endpoints', () => {
  const leases = kind('coordination.k8s.io', 'v1', 'leases');
  assert.deepEqual(
    leases.createCauses(obj('coordination.k8s.io/v1', 'Lease', { spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } })),
    [
      cause('FieldValueInvalid', 'spec.leaseDurationSeconds', 'Invalid value: 0: must be greater than 0'),
      cause('FieldValueInvalid', 'spec.leaseTransitions', 'Invalid value: -1: must be greater than or equal to 0'),
    ],
  );
  const slices = kind('discovery.k8s.io', 'v1', 'endpointslices');
  const slice = slices.defaulted(
    obj('discovery.k8s.io/v1', 'EndpointSlice', { addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ port: 80 }] }),
  );
  assert.deepEqual(slice.ports, [{ port: 80, name: '', protocol: 'TCP' }]);
  assert.deepEqual(
    slices.createCauses(
      obj('discovery.k8s.io/v1', 'EndpointSlice', {
        addressType: 'IPv5',
        endpoints: [{ addresses: [] }],
        ports: [{ name: 'a' }, { name: 'a', protocol: 'ICMP' }],
      }),
    ),
    [
      cause('FieldValueRequired', 'endpoints[0].addresses', 'Required value: must contain at least 1 address'),
      cause('FieldValueDuplicate', 'ports[1].name', 'Duplicate value: "a"'),
      cause('FieldValueNotSupported', 'ports[1].protocol', 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'),
      cause('FieldValueNotSupported', 'addressType', 'Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"'),
    ],
  );
  const created = obj('discovery.k8s.io/v1', 'EndpointSlice', { addressType: 'IPv4', endpoints: [] });
  assert.deepEqual(slices.updateCauses(created, obj('discovery.k8s.io/v1', 'EndpointSlice', { addressType: 'FQDN', endpoints: [] })), [
    cause('FieldValueInvalid', 'addressType', 'Invalid value: "FQDN": field is immutable'),
  ]);
  const endpoints = kind('', 'v1', 'endpoints');
  assert.deepEqual(
    endpoints.defaulted(obj('v1', 'Endpoints', { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] })).subsets,
    [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }] }],
  );
  assert.deepEqual(endpoints.createCauses(obj('v1', 'Endpoints', { subsets: [{ ports: [{ port: 80 }, { name: 'b', port: 0 }] }] })), [
    cause('FieldValueRequired', 'subsets[0]', 'Required value: must specify `addresses` or `notReadyAddresses`'),
    cause('FieldValueRequired', 'subsets[0].ports[0].name', 'Required value'),
    cause('FieldValueInvalid', 'subsets[0].ports[1].port', 'Invalid value: 0: must be between 1 and 65535, inclusive'),
  ]);
});

test('Events: legacy rules for core/v1, strict rules for events.k8s.io/v1', () => {
  const core = kind('', 'v1', 'events');
  assert.deepEqual(core.createCauses(obj('v1', 'Event', { involvedObject: { kind: 'Pod', name: 'p', namespace: 'other' }, reason: 'R' })), [
    cause('FieldValueInvalid', 'involvedObject.namespace', 'Invalid value: "other": does not match event.namespace'),
  ]);
  assert.deepEqual(
    core.createCauses(
      obj('v1', 'Event', { involvedObject: { kind: 'Pod', name: 'p', namespace: 'ns' }, eventTime: '2025-01-01T00:00:00.000000Z' }),
    ),
    [
      cause('FieldValueRequired', 'reportingComponent', 'Required value'),
      cause('FieldValueInvalid', 'reportingComponent', 'Invalid value: "": name part must be non-empty'),
      cause(
        'FieldValueInvalid',
        'reportingComponent',
        `Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ),
      cause('FieldValueRequired', 'reportingInstance', 'Required value'),
      cause('FieldValueRequired', 'action', 'Required value'),
      cause('FieldValueRequired', 'reason', 'Required value'),
    ],
  );
  const events = kind('events.k8s.io', 'v1', 'events');
  assert.deepEqual(
    events.createCauses(
      obj('events.k8s.io/v1', 'Event', {
        eventTime: '2025-01-01T00:00:00.000000Z',
        reportingController: 'example.com/ctl',
        reportingInstance: 'i',
        action: 'A',
        reason: 'R',
        regarding: { kind: 'Pod', name: 'p', namespace: 'ns' },
        type: 'Info',
        deprecatedCount: 3,
      }),
    ),
    [
      cause('FieldValueInvalid', 'type', 'Invalid value: "": has invalid value: Info'),
      cause('FieldValueInvalid', 'count', 'Invalid value: "": needs to be unset'),
    ],
  );
});

test('StorageClass and PriorityClass: defaults, validation, immutable fields', () => {
  const scs = kind('storage.k8s.io', 'v1', 'storageclasses');
  const sc = scs.defaulted(obj('storage.k8s.io/v1', 'StorageClass', { provisioner: 'example.com/disk' }));
  assert.equal(sc.reclaimPolicy, 'Delete');
  assert.equal(sc.volumeBindingMode, 'Immediate');
  assert.deepEqual(scs.createCauses(obj('storage.k8s.io/v1', 'StorageClass', { reclaimPolicy: 'Recycle' })), [
    cause('FieldValueRequired', 'provisioner', 'Required value'),
    cause('FieldValueNotSupported', 'reclaimPolicy', 'Unsupported value: "Recycle": supported values: "Delete", "Retain"'),
  ]);
  const old = obj('storage.k8s.io/v1', 'StorageClass', { provisioner: 'example.com/disk' });
  assert.deepEqual(
    scs.updateCauses(old, obj('storage.k8s.io/v1', 'StorageClass', { provisioner: 'example.com/other', parameters: { a: 'b' } })),
    [
      cause('FieldValueForbidden', 'parameters', 'Forbidden: updates to parameters are forbidden.'),
      cause('FieldValueForbidden', 'provisioner', 'Forbidden: updates to provisioner are forbidden.'),
    ],
  );
  const pcs = kind('scheduling.k8s.io', 'v1', 'priorityclasses');
  assert.equal(pcs.defaulted(obj('scheduling.k8s.io/v1', 'PriorityClass', { value: 100 })).preemptionPolicy, 'PreemptLowerPriority');
  assert.deepEqual(pcs.createCauses(obj('scheduling.k8s.io/v1', 'PriorityClass', { value: 2000000000 })), [
    cause('FieldValueForbidden', 'value', 'Forbidden: maximum allowed value of a user defined priority is 1000000000'),
  ]);
  assert.deepEqual(pcs.createCauses(obj('scheduling.k8s.io/v1', 'PriorityClass', { value: 1 }, 'system-custom')), [
    cause(
      'FieldValueForbidden',
      'metadata.name',
      "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-custom is not a known system priority class",
    ),
  ]);
  assert.deepEqual(
    pcs.updateCauses(
      obj('scheduling.k8s.io/v1', 'PriorityClass', { value: 1 }),
      obj('scheduling.k8s.io/v1', 'PriorityClass', { value: 2 }),
    ),
    [cause('FieldValueForbidden', 'value', 'Forbidden: may not be changed in an update.')],
  );
});

test('PersistentVolumeClaims and PersistentVolumes', () => {
  const pvcs = kind('', 'v1', 'persistentvolumeclaims');
  const spec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };
  const out = pvcs.defaulted(obj('v1', 'PersistentVolumeClaim', { spec }));
  assert.deepEqual(out.spec, { ...spec, volumeMode: 'Filesystem' });
  assert.deepEqual(out.status, { phase: 'Pending' });
  assert.deepEqual(pvcs.createCauses(obj('v1', 'PersistentVolumeClaim', { spec: { accessModes: ['ReadWriteSometimes'] } })), [
    cause(
      'FieldValueNotSupported',
      'spec.accessModes',
      'Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
    ),
    cause('FieldValueRequired', 'spec.resources[storage]', 'Required value'),
  ]);
  assert.deepEqual(pvcs.createCauses(obj('v1', 'PersistentVolumeClaim', { spec: { resources: { requests: { storage: '0' } } } })), [
    cause('FieldValueRequired', 'spec.accessModes', 'Required value: at least 1 access mode is required'),
    cause('FieldValueInvalid', 'spec.resources[storage]', 'Invalid value: "0": must be greater than zero'),
  ]);
  const causes = pvcs.updateCauses(
    obj('v1', 'PersistentVolumeClaim', { spec }),
    obj('v1', 'PersistentVolumeClaim', { spec: { ...spec, accessModes: ['ReadWriteMany'] } }),
  );
  assert.deepEqual(
    causes.map((c) => [c.reason, c.field]),
    [['FieldValueForbidden', 'spec']],
  );
  assert.match(
    causes[0]?.message ?? '',
    /^Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n/,
  );
  const pvs = kind('', 'v1', 'persistentvolumes');
  const pv = pvs.defaulted(
    obj('v1', 'PersistentVolume', { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' } } }),
  );
  assert.equal((pv.spec as Record<string, unknown>).persistentVolumeReclaimPolicy, 'Retain');
  assert.equal((pv.spec as Record<string, unknown>).volumeMode, 'Filesystem');
  assert.deepEqual(
    pvs.createCauses(obj('v1', 'PersistentVolume', { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } })),
    [cause('FieldValueRequired', 'spec', 'Required value: must specify a volume type')],
  );
});

test('Secrets and ConfigMaps: immutable data; Secret types', () => {
  const secrets = kind('', 'v1', 'secrets');
  const old = obj('v1', 'Secret', { immutable: true, data: { a: 'YQ==' } });
  assert.deepEqual(secrets.updateCauses(old, obj('v1', 'Secret', { data: { a: 'Yg==' } })), [
    cause('FieldValueForbidden', 'immutable', 'Forbidden: field is immutable when `immutable` is set'),
    cause('FieldValueForbidden', 'data', 'Forbidden: field is immutable when `immutable` is set'),
  ]);
  assert.deepEqual(
    secrets.updateCauses(obj('v1', 'Secret', {}), obj('v1', 'Secret', { type: 'kubernetes.io/tls', data: { 'tls.crt': '' } })),
    [
      cause('FieldValueInvalid', 'type', 'Invalid value: "kubernetes.io/tls": field is immutable'),
      cause('FieldValueRequired', 'data[tls.key]', 'Required value'),
    ],
  );
  const configmaps = kind('', 'v1', 'configmaps');
  assert.deepEqual(configmaps.createCauses(obj('v1', 'ConfigMap', { data: { 'bad key': 'v' } })), [
    cause(
      'FieldValueInvalid',
      'data[bad key]',
      `Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
    ),
  ]);
});

test('every built-in kind: finalizer names must be standard or qualified', () => {
  const configmaps = kind('', 'v1', 'configmaps');
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', finalizers: ['kubernetes', 'example.com/cleanup', 'cleanup'] } };
  assert.deepEqual(configmaps.createCauses(cm), [
    cause(
      'FieldValueInvalid',
      'metadata.finalizers[2]',
      'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
    ),
  ]);
});
