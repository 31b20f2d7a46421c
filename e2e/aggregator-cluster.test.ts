// The aggregation layer in the replicated control plane: a local cluster (3 etcd + 3 kapi +
// haproxy, deploy/local-cluster.ts) with the front-proxy certificate, an APIService for a
// second kapi registered through the load balancer, and every replica serving the
// aggregated group (discovery, list, create) with kubectl 1.33.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalCluster, type LocalCluster } from '../deploy/local-cluster.js';
import { kubectlOk, waitFor } from './harness.js';
import {
  GROUP,
  availability,
  backendArgs,
  frontProxyFlags,
  makeFrontProxyCerts,
  registration,
  startBackend,
  type Backend,
} from './aggregated-backend.js';

describe('aggregated API server behind a local cluster', { timeout: 900_000 }, () => {
  let dir: string;
  let cluster: LocalCluster;
  let backend: Backend;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-aggregator-cluster-'));
    const certs = await makeFrontProxyCerts(path.join(dir, 'front-proxy'));
    backend = await startBackend(backendArgs(certs, dir), path.join(dir, 'backend'));
    cluster = await startLocalCluster({ dir: path.join(dir, 'cluster'), kapiArgs: frontProxyFlags(certs) });
    await kubectlOk(['apply', '-f', '-'], { kubeconfig: cluster.kubeconfig, input: registration(backend.port, backend.caPem) });
    await waitFor(
      'the APIService to be Available',
      async () => ((await availability(cluster.kubeconfig)).startsWith('True Passed') ? true : undefined),
      120_000,
    );
  });

  after(async () => {
    await cluster?.stop();
    await backend?.kapi.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the aggregated group through every replica and the load balancer', async () => {
    const lb = { kubeconfig: cluster.kubeconfig };
    await kubectlOk(['create', '-f', '-'], {
      ...lb,
      input: JSON.stringify({
        apiVersion: `${GROUP}/v1`,
        kind: 'Widget',
        metadata: { name: 'shared', namespace: 'default' },
        spec: { color: 'green' },
      }),
    });
    for (let i = 0; i < cluster.replicas.length; i++) {
      const replica = { kubeconfig: cluster.replicaKubeconfig(i) };
      // each replica follows the APIService on its own: wait until this one proxies it
      await waitFor(
        `replica ${i} to list the aggregated group`,
        async () => ((await kubectlOk(['api-versions'], replica)).includes(`${GROUP}/v1`) ? true : undefined),
        60_000,
      );
      assert.match(
        await kubectlOk(['api-resources', '--api-group', GROUP], replica),
        /^widgets\s+wdg\s+agg\.example\.com\/v1\s+true\s+Widget$/m,
      );
      assert.match(await kubectlOk(['get', 'widgets'], replica), /^shared\s+green\s+/m);
      await kubectlOk(['create', '-f', '-'], {
        ...replica,
        input: JSON.stringify({
          apiVersion: `${GROUP}/v1`,
          kind: 'Widget',
          metadata: { name: `from-${i}`, namespace: 'default' },
          spec: { color: 'c' },
        }),
      });
    }
    const all = await kubectlOk(['get', 'widgets', '-o', 'name'], lb);
    assert.deepEqual(all.trim().split('\n').sort(), [
      'widget.agg.example.com/from-0',
      'widget.agg.example.com/from-1',
      'widget.agg.example.com/from-2',
      'widget.agg.example.com/shared',
    ]);
  });
});
