import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { createNodeAuthorizer, podForGraph, podReferences } from './node.js';

const pod: KubeObject = {
  metadata: { name: 'p', namespace: 'ns' },
  spec: {
    nodeName: 'n1',
    serviceAccountName: 'sa',
    volumes: [
      { name: 'v', secret: { secretName: 's1' } },
      { name: 'c', configMap: { name: 'cm1' } },
      { name: 'd', persistentVolumeClaim: { claimName: 'claim' } },
    ],
    containers: [{ name: 'x', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's2', key: 'k' } } }] }],
  },
};
const claim: KubeObject = { metadata: { name: 'claim', namespace: 'ns' }, spec: { volumeName: 'pv1' } };
const graph = {
  podsOn: (n: string) => (n === 'n1' ? [pod] : []),
  pvc: (ns: string, name: string) => (ns === 'ns' && name === 'claim' ? claim : undefined),
};
const node = createNodeAuthorizer(() => graph);
const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const base = {
  user: n1,
  verb: 'get',
  isResourceRequest: true,
  path: '',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'secrets',
  subresource: '',
  namespace: 'ns',
  name: 's1',
};

describe('Node authorizer', () => {
  it('pod references', () => {
    const refs = podReferences(pod)
      .map((r) => `${r.kind}/${r.name}`)
      .sort();
    assert.deepEqual(refs, ['configmap/cm1', 'pvc/claim', 'secret/s1', 'secret/s2', 'serviceaccount/sa']);
  });

  it('reads what its pods use, nothing else', async () => {
    assert.equal((await node.authorize(base)).decision, 'allow');
    assert.equal((await node.authorize({ ...base, name: 's2' })).decision, 'allow');
    assert.deepEqual(await node.authorize({ ...base, name: 'other' }), {
      decision: 'noOpinion',
      reason: "no relationship found between node 'n1' and this object",
    });
    assert.equal((await node.authorize({ ...base, resource: 'configmaps', name: 'cm1' })).decision, 'allow');
    assert.equal((await node.authorize({ ...base, resource: 'persistentvolumeclaims', name: 'claim' })).decision, 'allow');
    assert.equal((await node.authorize({ ...base, resource: 'persistentvolumes', namespace: '', name: 'pv1' })).decision, 'allow');
    assert.equal(
      (await node.authorize({ ...base, resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'sa' })).decision,
      'allow',
    );
    assert.equal((await node.authorize({ ...base, user: { username: 'system:node:n2', groups: ['system:nodes'] } })).decision, 'noOpinion');
    assert.equal((await node.authorize({ ...base, verb: 'delete' })).decision, 'noOpinion');
  });

  it('decides the same over what the graph keeps of a pod (its node and references)', async () => {
    const slim = podForGraph(pod);
    assert.deepEqual(Object.keys(slim.spec as object), ['nodeName']);
    const overSlim = createNodeAuthorizer(() => ({ ...graph, podsOn: (n: string) => (n === 'n1' ? [slim] : []) }));
    for (const attrs of [
      base,
      { ...base, name: 's2' },
      { ...base, name: 'other' },
      { ...base, resource: 'configmaps', name: 'cm1' },
      { ...base, resource: 'persistentvolumes', namespace: '', name: 'pv1' },
      { ...base, resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'sa' },
    ]) {
      assert.deepEqual(await overSlim.authorize(attrs), await node.authorize(attrs), JSON.stringify(attrs));
    }
  });

  it('its own lease; system:node rules for the rest; others get no opinion', async () => {
    const lease = {
      ...base,
      apiGroup: 'coordination.k8s.io',
      resource: 'leases',
      namespace: 'kube-node-lease',
      name: 'n1',
      verb: 'update',
    };
    assert.equal((await node.authorize(lease)).decision, 'allow');
    assert.equal((await node.authorize({ ...lease, name: 'n2' })).decision, 'noOpinion');
    assert.equal((await node.authorize({ ...base, resource: 'pods', name: '', verb: 'list' })).decision, 'allow');
    assert.equal(
      (await node.authorize({ ...base, resource: 'nodes', subresource: 'status', namespace: '', name: 'n1', verb: 'patch' })).decision,
      'allow',
    );
    assert.equal((await node.authorize({ ...base, resource: 'deployments', apiGroup: 'apps', verb: 'list' })).decision, 'noOpinion');
    assert.equal((await node.authorize({ ...base, user: { username: 'alice', groups: [] } })).decision, 'noOpinion');
  });
});
