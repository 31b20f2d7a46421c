// NodeRestriction over a real registry on real etcd: writes made as `system:node:n1` go through
// the registry with the plugin as its admission hooks.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import { ctx, statusOf, startRegistry, type RegistryHarness } from '../../registry/testing/harness.js';
import type { AdmissionHooks, RequestContext } from '../../registry/rest.js';
import type { UserInfo } from '../../machinery/user.js';
import type { AdmissionPlugin } from '../plugin.js';
import { nodeIdentity, nodeRestrictionFactory } from './node-restriction.js';
import { buildPlugin, requestContext } from './test-helpers.js';

const n1: UserInfo = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };

function hooks(p: AdmissionPlugin): AdmissionHooks {
  return {
    async mutate(attrs) {
      return attrs.object!;
    },
    async validate(attrs) {
      if (p.handles && !p.handles(attrs)) return;
      await p.validate!(attrs, requestContext());
    },
  };
}

describe('NodeRestriction', () => {
  let h: RegistryHarness;
  let plugin: AdmissionPlugin;
  let nodeUid = '';
  const as = (user: UserInfo, namespace = 'default'): RequestContext => ctx(namespace, { user, admission: hooks(plugin) });

  function mirrorPod(name: string, extra: Record<string, unknown> = {}, owner: Record<string, unknown> = {}): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        annotations: { 'kubernetes.io/config.mirror': 'hash' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: nodeUid, controller: true, ...owner }],
      },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox:1.36' }], ...extra },
    } as KubeObject;
  }

  before(async () => {
    h = await startRegistry();
    plugin = await buildPlugin(nodeRestrictionFactory, h.registry);
    await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-node-lease' } });
  });
  after(async () => {
    await h?.close();
  });

  it('identifies nodes by name prefix and group', () => {
    assert.equal(nodeIdentity(n1), 'n1');
    assert.equal(nodeIdentity({ username: 'system:node:n1', groups: [] }), undefined);
    assert.equal(nodeIdentity({ username: 'alice', groups: ['system:nodes'] }), undefined);
  });

  it('a node registers itself only, without restricted labels, and may not change its taints', async () => {
    const nodes = h.rest('', 'v1', 'nodes');
    const other = await statusOf(nodes.create(as(n1, ''), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } }));
    assert.equal(other.message, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    const labelled = await statusOf(
      nodes.create(as(n1, ''), {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n1', labels: { 'node-restriction.kubernetes.io/x': 'y', 'kubernetes.io/hostname': 'n1' } },
      }),
    );
    assert.equal(
      labelled.message,
      'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/x',
    );
    const created = await nodes.create(as(n1, ''), {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } },
    });
    nodeUid = created.metadata.uid ?? '';
    const tainted = await statusOf(
      nodes.update(as(n1, ''), 'n1', (cur) => ({ ...cur!, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }), {
        allowCreate: false,
      }),
    );
    assert.equal(tainted.message, 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
  });

  it('a node creates only mirror pods bound to and owned by itself, and deletes only its own pods', async () => {
    const pods = h.rest('', 'v1', 'pods');
    const plain = await statusOf(
      pods.create(as(n1), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'plain' },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      }),
    );
    assert.equal(
      plain.message,
      'pods "plain" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    );
    const secret = await statusOf(pods.create(as(n1), mirrorPod('s', { volumes: [{ name: 'v', secret: { secretName: 'x' } }] })));
    assert.equal(secret.message, 'pods "s" is forbidden: node "n1" can not create pods that reference secrets');
    const notController = await statusOf(pods.create(as(n1), mirrorPod('nc', {}, { controller: false })));
    assert.equal(
      notController.message,
      'pods "nc" is forbidden: node "n1" can only create pods with a controller owner reference set to itself',
    );
    await pods.create(as(n1), mirrorPod('static-web'));
    await pods.create(ctx('default'), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'elsewhere' },
      spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'x' }] },
    });
    const del = await statusOf(pods.delete(as(n1), 'elsewhere', {}));
    assert.equal(del.message, 'pods "elsewhere" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
    const upd = await statusOf(
      pods.update(as(n1), 'static-web', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { a: 'b' } } }), { allowCreate: false }),
    );
    assert.equal(
      upd.message,
      'pods "static-web" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods',
    );
    await pods.delete(as(n1), 'static-web', { gracePeriodSeconds: 0 });
  });

  it('a node writes only its own Lease in kube-node-lease', async () => {
    const leases = h.rest('coordination.k8s.io', 'v1', 'leases');
    const lease = (name: string): KubeObject => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: name },
    });
    const wrongNs = await statusOf(leases.create(as(n1, 'default'), lease('n1')));
    assert.equal(
      wrongNs.message,
      'leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace',
    );
    const other = await statusOf(leases.create(as(n1, 'kube-node-lease'), lease('n2')));
    assert.equal(
      other.message,
      'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
    );
    await leases.create(as(n1, 'kube-node-lease'), lease('n1'));
  });

  it('other users are not restricted', async () => {
    await h.rest('', 'v1', 'pods').create(ctx('default', { admission: hooks(plugin) }), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'admin-pod' },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
  });
});
