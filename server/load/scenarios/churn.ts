// churn: ConfigMaps and Secrets created, updated and deleted at a target rate of calls, each
// object carrying `size` bytes of data. Every object that was created and then deleted must be
// gone at the end; those whose delete failed must still be there.

import { check, countItems, createNamespaces, deleteNamespaces, RUN_LABEL, type RunContext, type ScenarioResult } from '../context.js';
import { paced } from '../pacer.js';

export interface ChurnParams {
  /** objects taken through create, update and delete */
  objects: number;
  /** calls per second (three per object) */
  rate: number;
  /** bytes of data per object */
  size: number;
}

const KINDS = [
  { resource: 'configmaps', kind: 'ConfigMap', data: (s: string) => ({ data: { payload: s } }) },
  { resource: 'secrets', kind: 'Secret', data: (s: string) => ({ type: 'Opaque', data: { payload: Buffer.from(s).toString('base64') } }) },
] as const;

export async function runChurn(ctx: RunContext, p: ChurnParams): Promise<ScenarioResult> {
  ctx.phase('churn: namespace');
  const [ns] = await createNamespaces(ctx, 'churn', 1);
  const payload = (i: number): string => `${i}:`.padEnd(Math.max(1, p.size), 'x');
  let created = 0;
  let deleted = 0;
  let attempted = 0;
  ctx.phase('churn: create, update, delete');
  await paced(
    { rate: p.rate / 3, count: p.objects, deadline: ctx.deadline, concurrency: Math.max(1, Math.floor(ctx.concurrency / 3)) },
    async (i) => {
      attempted++;
      const k = KINDS[i % KINDS.length]!;
      const name = `churn-${i}`;
      const base = `/api/v1/namespaces/${ns}/${k.resource}`;
      const body = { apiVersion: 'v1', kind: k.kind, metadata: { name, labels: { [RUN_LABEL]: ctx.runId } }, ...k.data(payload(i)) };
      const c = await ctx.client.call('create', k.resource, 'POST', base, { body });
      if (c.status !== 201) return;
      created++;
      const rv = (JSON.parse(c.body.toString()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      await ctx.client.call('update', k.resource, 'PUT', `${base}/${name}`, {
        body: { ...body, metadata: { ...body.metadata, resourceVersion: rv }, ...k.data(payload(i + 1)) },
      });
      const d = await ctx.client.call('delete', k.resource, 'DELETE', `${base}/${name}`);
      if (d.status === 200 || d.status === 202) deleted++;
    },
  );
  const query = new URLSearchParams({ labelSelector: `${RUN_LABEL}=${ctx.runId}` });
  const left =
    (await countItems(ctx, 'configmaps', `/api/v1/namespaces/${ns}/configmaps`, query)) +
    (await countItems(ctx, 'secrets', `/api/v1/namespaces/${ns}/secrets`, query));
  await deleteNamespaces(ctx, [ns!]);
  return {
    scenario: 'churn',
    parameters: { ...p },
    delivery: {},
    checks: [
      check('objects attempted', Math.min(p.objects, attempted), attempted),
      check('objects left = created - deleted', created - deleted, left),
    ],
  };
}
