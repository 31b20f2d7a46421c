// list: a collection of `objects` ConfigMaps listed whole and in pages, consistent (from
// etcd's current revision) and at resourceVersion=0 (whatever the cache holds), as JSON and as
// protobuf. Every list must return every object.

import { check, createNamespaces, deleteNamespaces, RUN_LABEL, type RunContext, type ScenarioResult } from '../context.js';
import { paced } from '../pacer.js';
import { protobufListSummary } from '../protobuf-list.js';

export interface ListParams {
  objects: number;
  /** bytes of data per object */
  size: number;
  /** lists per variant (8 variants) */
  repeats: number;
  pageSize: number;
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

interface Variant {
  label: string;
  resourceVersion?: '0';
  protobuf: boolean;
  paged: boolean;
}

const VARIANTS: Variant[] = [false, true].flatMap((protobuf) =>
  [false, true].flatMap((paged) =>
    [undefined, '0' as const].map((resourceVersion) => ({
      label: `${protobuf ? 'protobuf' : 'json'}, ${paged ? 'paged' : 'full'}, ${resourceVersion === '0' ? 'rv=0' : 'consistent'}`,
      resourceVersion,
      protobuf,
      paged,
    })),
  ),
);

/** one list, following continue tokens; resolves the items seen, -1 when a page failed */
async function listOnce(ctx: RunContext, path: string, v: Variant, pageSize: number): Promise<number> {
  let items = 0;
  let token = '';
  do {
    const q = new URLSearchParams({ labelSelector: `${RUN_LABEL}=${ctx.runId}` });
    if (v.resourceVersion) q.set('resourceVersion', v.resourceVersion);
    if (v.paged) q.set('limit', String(pageSize));
    if (token) q.set('continue', token);
    const a = await ctx.client.call('list', `configmaps (${v.label})`, 'GET', `${path}?${q}`, {
      accept: v.protobuf ? PROTOBUF : 'application/json',
      timeoutMs: 120_000,
    });
    if (a.status !== 200) return -1;
    if (v.protobuf) {
      const s = protobufListSummary(a.body);
      items += s.items;
      token = s.continueToken;
    } else {
      const list = JSON.parse(a.body.toString()) as { items: unknown[]; metadata: { continue?: string } };
      items += list.items.length;
      token = list.metadata.continue ?? '';
    }
  } while (token);
  return items;
}

export async function runList(ctx: RunContext, p: ListParams): Promise<ScenarioResult> {
  ctx.phase('list: seeding');
  const [ns] = await createNamespaces(ctx, 'list', 1);
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  let seeded = 0;
  await paced({ rate: 0, count: p.objects, deadline: ctx.deadline, concurrency: ctx.concurrency }, async (i) => {
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `list-${i}`, labels: { [RUN_LABEL]: ctx.runId } },
      data: { payload: ''.padEnd(p.size, 'x') },
    };
    if ((await ctx.client.call('create', 'configmaps', 'POST', path, { body })).status === 201) seeded++;
  });
  ctx.phase('list: listing');
  const checks = [];
  for (const v of VARIANTS) {
    let complete = 0;
    let lists = 0;
    await paced({ rate: 0, count: p.repeats, deadline: ctx.deadline, concurrency: Math.max(1, Math.min(4, ctx.concurrency)) }, async () => {
      lists++;
      if ((await listOnce(ctx, path, v, p.pageSize)) === seeded) complete++;
    });
    checks.push(check(`${v.label}: lists that returned all ${seeded} objects`, lists, complete));
  }
  await deleteNamespaces(ctx, [ns!]);
  return {
    scenario: 'list',
    parameters: { ...p },
    delivery: {},
    checks: [check('objects seeded', Math.min(p.objects, seeded), seeded), ...checks],
  };
}
