// Unit tests of what quota counts (no etcd): pod requests and limits with init containers,
// sidecars and overhead, pod scopes, services' node ports and load balancers, claims by
// storage class, the plain counters, and the list arithmetic's formats.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import { parseQuantity } from '../../machinery/quantity.js';
import {
  addLists,
  countedResource,
  evaluatorFor,
  isIgnoredByQuota,
  prettyPrint,
  resourceListJson,
  subtractNonNegative,
} from './quota-evaluators.js';

const now = new Date('2026-01-01T00:00:00Z');
const json = (obj: KubeObject, group = '', resource = 'pods') => resourceListJson(evaluatorFor(group, resource).usage(obj, now));

const pod = (spec: Record<string, unknown>, extra: Partial<KubeObject> = {}): KubeObject => ({
  metadata: { name: 'p', namespace: 'n' },
  spec,
  ...extra,
});
const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, more: Record<string, unknown> = {}) => ({
  name,
  image: 'x',
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
  ...more,
});

describe('quota evaluators', () => {
  it('pods: containers summed, init containers as a floor, sidecars added, overhead on requests', () => {
    const p = pod({
      containers: [c('a', { cpu: '100m', memory: '64Mi' }, { cpu: '200m' }), c('b', { cpu: '300m' })],
      initContainers: [c('init', { cpu: '1', memory: '32Mi' }), c('side', { cpu: '50m' }, undefined, { restartPolicy: 'Always' })],
      overhead: { cpu: '10m' },
    });
    assert.deepEqual(json(p), {
      'count/pods': '1',
      cpu: '1010m',
      // the overhead adds to a limit that is set
      'limits.cpu': '210m',
      memory: '64Mi',
      pods: '1',
      'requests.cpu': '1010m',
      'requests.memory': '64Mi',
    });
    const done = pod({ containers: [c('a', { cpu: '1' })] }, { status: { phase: 'Succeeded' } });
    assert.deepEqual(json(done), { 'count/pods': '1' });
    const ext = pod({ containers: [c('a', { 'example.com/gpu': '2', 'hugepages-2Mi': '4Mi' })] });
    assert.deepEqual(json(ext), {
      'count/pods': '1',
      'hugepages-2Mi': '4Mi',
      pods: '1',
      'requests.example.com/gpu': '2',
      'requests.hugepages-2Mi': '4Mi',
    });
  });

  it('pods: must-specify names every container missing a tracked cpu/memory value', () => {
    const e = evaluatorFor('', 'pods');
    const p = pod({ containers: [c('a', { cpu: '1' }), c('b')], initContainers: [c('i', { memory: '1Mi' })] });
    assert.equal(
      e.constraints(['requests.cpu', 'limits.memory', 'pods'], p),
      'must specify limits.memory for: a,b,i; requests.cpu for: b,i',
    );
    assert.equal(e.constraints(['pods', 'requests.storage'], p), undefined);
  });

  it('pods: scopes', () => {
    const e = evaluatorFor('', 'pods');
    const best = pod({ containers: [c('a')] });
    const burst = pod({ containers: [c('a', { cpu: '1' })], activeDeadlineSeconds: 10, priorityClassName: 'high' });
    const scope = (scopeName: string, operator = 'Exists', values: string[] = []) => ({ scopeName, operator, values });
    assert.equal(e.matchesScope(scope('BestEffort'), best), true);
    assert.equal(e.matchesScope(scope('NotBestEffort'), burst), true);
    assert.equal(e.matchesScope(scope('Terminating'), burst), true);
    assert.equal(e.matchesScope(scope('NotTerminating'), best), true);
    assert.equal(e.matchesScope(scope('PriorityClass', 'In', ['high']), burst), true);
    assert.equal(e.matchesScope(scope('PriorityClass', 'NotIn', ['high']), best), true);
    assert.equal(e.matchesScope(scope('PriorityClass', 'Exists'), best), false);
    const cross = pod({
      containers: [c('a')],
      affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaces: ['x'], topologyKey: 'k' }] } },
    });
    assert.equal(e.matchesScope(scope('CrossNamespacePodAffinity'), cross), true);
    assert.equal(e.matchesScope(scope('CrossNamespacePodAffinity'), best), false);
  });

  it('services: node ports and load balancers by type', () => {
    const svc = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 's' }, spec });
    const ports = [{ port: 80 }, { port: 443, nodePort: 30001 }];
    assert.deepEqual(json(svc({ type: 'ClusterIP', ports }), '', 'services'), {
      'count/services': '1',
      services: '1',
      'services.loadbalancers': '0',
      'services.nodeports': '0',
    });
    assert.deepEqual(json(svc({ type: 'NodePort', ports }), '', 'services'), {
      'count/services': '1',
      services: '1',
      'services.loadbalancers': '0',
      'services.nodeports': '2',
    });
    assert.deepEqual(json(svc({ type: 'LoadBalancer', ports, allocateLoadBalancerNodePorts: false }), '', 'services'), {
      'count/services': '1',
      services: '1',
      'services.loadbalancers': '1',
      'services.nodeports': '1',
    });
  });

  it('claims: storage rounded up to bytes, per storage class, the larger allocated size', () => {
    const pvc: KubeObject = {
      metadata: { name: 'c' },
      spec: { storageClassName: 'gold', resources: { requests: { storage: '1500m' } } },
      status: {},
    };
    assert.deepEqual(json(pvc, '', 'persistentvolumeclaims'), {
      'count/persistentvolumeclaims': '1',
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
      'gold.storageclass.storage.k8s.io/requests.storage': '2',
      persistentvolumeclaims: '1',
      'requests.storage': '2',
    });
    const grown = { ...pvc, spec: { resources: { requests: { storage: '1Gi' } } }, status: { allocatedResources: { storage: '2Gi' } } };
    assert.equal(json(grown, '', 'persistentvolumeclaims')['requests.storage'], '2Gi');
    const e = evaluatorFor('', 'persistentvolumeclaims');
    assert.deepEqual(e.matchingResources(['requests.storage', 'gold.storageclass.storage.k8s.io/requests.storage', 'pods']), [
      'requests.storage',
      'gold.storageclass.storage.k8s.io/requests.storage',
    ]);
  });

  it('counters: legacy aliases, count/<resource>.<group>, create only; ignored resources', () => {
    assert.deepEqual(json({ metadata: { name: 'x' } }, '', 'configmaps'), { configmaps: '1', 'count/configmaps': '1' });
    assert.deepEqual(json({ metadata: { name: 'x' } }, 'apps', 'deployments'), { 'count/deployments.apps': '1' });
    const e = evaluatorFor('apps', 'deployments');
    assert.equal(e.handles({ operation: 'CREATE', object: null, oldObject: null }), true);
    assert.equal(e.handles({ operation: 'UPDATE', object: null, oldObject: null }), false);
    assert.equal(e.handles({ operation: 'CREATE', subresource: 'scale', object: null, oldObject: null }), false);
    assert.deepEqual(countedResource('count/deployments.apps'), { group: 'apps', resource: 'deployments' });
    assert.deepEqual(countedResource('count/pods'), { group: '', resource: 'pods' });
    assert.equal(isIgnoredByQuota('', 'events'), true);
    assert.equal(isIgnoredByQuota('', 'configmaps'), false);
  });

  it('list arithmetic keeps kube formats: a zero takes the other side format, differences never go negative', () => {
    const l = (o: Record<string, string>) => new Map(Object.entries(o).map(([k, v]) => [k, parseQuantity(v)]));
    assert.equal(
      prettyPrint(addLists(l({ 'requests.memory': '0' }), l({ 'requests.memory': '1Gi', pods: '1' }))),
      'pods=1,requests.memory=1Gi',
    );
    assert.equal(prettyPrint(addLists(l({ cpu: '500m' }), l({ cpu: '1' }))), 'cpu=1500m');
    assert.equal(prettyPrint(subtractNonNegative(l({ cpu: '1', pods: '1' }), l({ cpu: '2', memory: '1Gi' }))), 'cpu=0,memory=0,pods=1');
  });
});
