// watch: W watchers on one collection of ConfigMaps while a writer patches them at a target
// rate. Each patch carries a sequence number; every watcher must see every patch exactly
// once, in resourceVersion order. Lag is from the patch being sent to the event arriving.

import { check, createNamespaces, deleteNamespaces, RUN_LABEL, type RunContext, type ScenarioResult } from '../context.js';
import { deliveryStats, Expectations, Informer, settle, type WatchedObject } from '../informer.js';
import { paced } from '../pacer.js';

export interface WatchParams {
  watchers: number;
  /** patches per second */
  rate: number;
  updates: number;
  /** ConfigMaps the patches rotate over */
  objects: number;
}

const modifiedKey = (type: string, o: WatchedObject): string | undefined =>
  type === 'MODIFIED' && o.data?.seq ? `${o.metadata.name}#${o.data.seq}` : undefined;

export async function runWatch(ctx: RunContext, p: WatchParams): Promise<ScenarioResult> {
  ctx.phase('watch: objects');
  const [ns] = await createNamespaces(ctx, 'watch', 1);
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const objects = Math.max(1, p.objects);
  let rv = '0';
  for (let i = 0; i < objects; i++) {
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `watched-${i}`, labels: { [RUN_LABEL]: ctx.runId } },
      data: { seq: '' },
    };
    const a = await ctx.client.must('create', 'configmaps', 'POST', path, { body });
    rv = (JSON.parse(a.body.toString()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  }
  const expectations = new Expectations();
  const watchers = Array.from(
    { length: p.watchers },
    () =>
      new Informer(ctx.client, {
        path,
        selectors: new URLSearchParams({ labelSelector: `${RUN_LABEL}=${ctx.runId}` }),
        keyOf: modifiedKey,
        expectations,
        startResourceVersion: rv,
      }),
  );
  ctx.phase('watch: opening watches');
  await Promise.all(watchers.map((w) => w.start('configmaps')));
  ctx.phase('watch: writing');
  let patched = 0;
  let attempted = 0;
  await paced({ rate: p.rate, count: p.updates, deadline: ctx.deadline, concurrency: ctx.concurrency }, async (i) => {
    attempted++;
    const name = `watched-${i % objects}`;
    const key = `${name}#${i + 1}`;
    expectations.expect(key, performance.now());
    const a = await ctx.client.call('patch', 'configmaps', 'PATCH', `${path}/${name}`, {
      body: { data: { seq: String(i + 1) } },
      contentType: 'application/merge-patch+json',
    });
    if (a.status === 200) patched++;
    else expectations.forget(key);
  });
  ctx.phase('watch: waiting for watchers');
  await settle(watchers, ctx.settleMs);
  await Promise.all(watchers.map((w) => w.stop()));
  const delivery = deliveryStats(watchers, expectations);
  await deleteNamespaces(ctx, [ns!]);
  return {
    scenario: 'watch',
    parameters: { ...p },
    delivery: { watchers: delivery },
    checks: [
      check('patches attempted', Math.min(p.updates, attempted), attempted),
      check('events delivered = patches x watchers', patched * p.watchers, delivery.delivered),
      check('duplicated events', 0, delivery.duplicated),
      check('events out of order', 0, delivery.outOfOrder),
    ],
  };
}
