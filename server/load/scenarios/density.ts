// density: N Pods over M namespaces at a target rate, watched the way a cluster watches them:
// one watch per node-like client with a spec.nodeName field selector (as kubelets do) and
// cluster-wide informers (as controllers do). Every Pod created must reach its node's watcher
// and every informer exactly once.

import {
  check,
  countItems,
  createNamespaces,
  deleteNamespaces,
  RUN_LABEL,
  waitForServiceAccounts,
  type RunContext,
  type ScenarioResult,
} from '../context.js';
import { deliveryStats, Expectations, Informer, mergeDelivery, settle, type WatchedObject } from '../informer.js';
import { paced } from '../pacer.js';

export interface DensityParams {
  pods: number;
  namespaces: number;
  /** Pod creations per second */
  rate: number;
  /** node-like watchers, each with its own field selector */
  nodes: number;
  /** cluster-wide informers */
  informers: number;
}

const addedKey = (type: string, o: WatchedObject): string | undefined =>
  type === 'ADDED' ? `${o.metadata.namespace}/${o.metadata.name}` : undefined;

function podBody(runId: string, name: string, node: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { [RUN_LABEL]: runId, app: 'kapi-load-density' } },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
      terminationGracePeriodSeconds: 0,
    },
  };
}

export async function runDensity(ctx: RunContext, p: DensityParams): Promise<ScenarioResult> {
  ctx.phase('density: namespaces');
  const namespaces = await createNamespaces(ctx, 'density', Math.max(1, p.namespaces));
  await waitForServiceAccounts(ctx, namespaces);
  const runSelector = `${RUN_LABEL}=${ctx.runId}`;
  const nodeNames = Array.from({ length: Math.max(1, p.nodes) }, (_, i) => `kapi-load-node-${i}`);
  const everyPod = new Expectations();
  const perNode = nodeNames.map(() => new Expectations());
  const clusterWide = Array.from(
    { length: p.informers },
    () =>
      new Informer(ctx.client, {
        path: '/api/v1/pods',
        selectors: new URLSearchParams({ labelSelector: runSelector }),
        keyOf: addedKey,
        expectations: everyPod,
      }),
  );
  const nodeWatchers = nodeNames.slice(0, p.nodes).map(
    (node, i) =>
      new Informer(ctx.client, {
        path: '/api/v1/pods',
        selectors: new URLSearchParams({ fieldSelector: `spec.nodeName=${node}`, labelSelector: runSelector }),
        keyOf: addedKey,
        expectations: perNode[i]!,
      }),
  );
  ctx.phase('density: starting watchers');
  await Promise.all([...clusterWide, ...nodeWatchers].map((w) => w.start('pods')));
  ctx.phase('density: creating pods');
  let created = 0;
  let failed = 0;
  await paced({ rate: p.rate, count: p.pods, deadline: ctx.deadline, concurrency: ctx.concurrency }, async (i) => {
    const ns = namespaces[i % namespaces.length]!;
    const node = i % nodeNames.length;
    const name = `pod-${i}`;
    const key = `${ns}/${name}`;
    const now = performance.now();
    everyPod.expect(key, now);
    perNode[node]!.expect(key, now);
    const a = await ctx.client.call('create', 'pods', 'POST', `/api/v1/namespaces/${ns}/pods`, {
      body: podBody(ctx.runId, name, nodeNames[node]!),
    });
    if (a.status === 201) created++;
    else {
      failed++;
      everyPod.forget(key);
      perNode[node]!.forget(key);
    }
  });
  ctx.phase('density: waiting for watchers');
  await settle([...clusterWide, ...nodeWatchers], ctx.settleMs);
  await Promise.all([...clusterWide, ...nodeWatchers].map((w) => w.stop()));
  const stored = await countItems(ctx, 'pods', '/api/v1/pods', new URLSearchParams({ labelSelector: runSelector }));
  const delivery: ScenarioResult['delivery'] = {};
  if (clusterWide.length) delivery['cluster-wide informers'] = deliveryStats(clusterWide, everyPod);
  if (nodeWatchers.length) delivery['node watchers'] = mergeDelivery(nodeWatchers.map((w, i) => deliveryStats([w], perNode[i]!)));
  await deleteNamespaces(ctx, namespaces);
  return {
    scenario: 'density',
    parameters: { ...p },
    delivery,
    checks: [
      check('pods created + failed = attempted', Math.min(p.pods, created + failed), created + failed),
      check('pods stored = pods created', created, stored),
    ],
  };
}
