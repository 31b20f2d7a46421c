// What every scenario is given and what it hands back.

import type { LoadClient } from './http-client.js';
import type { DeliveryStats } from './informer.js';

export interface RunContext {
  client: LoadClient;
  /** names this run's namespaces and labels its objects (`kapi-load-run=<runId>`) */
  runId: string;
  /** performance.now() after which no new call starts */
  deadline: number;
  /** calls in flight at most */
  concurrency: number;
  /** how long watchers may take to catch up after the writes end */
  settleMs: number;
  cleanup: boolean;
  /** the phase shown on the progress line */
  phase(text: string): void;
}

/** a count the run can check: what should have happened against what did */
export interface Check {
  name: string;
  expected: number;
  actual: number;
  ok: boolean;
}

export interface ScenarioResult {
  scenario: string;
  parameters: Record<string, number | string>;
  /** per group of watchers */
  delivery: Record<string, DeliveryStats>;
  checks: Check[];
  /** mixed: the scenarios it ran */
  parts?: ScenarioResult[];
}

export const RUN_LABEL = 'kapi-load-run';

export function check(name: string, expected: number, actual: number): Check {
  return { name, expected, actual, ok: expected === actual };
}

/** creates `n` namespaces for the run and waits for their default ServiceAccounts (pods need
 *  them to pass admission) */
export async function createNamespaces(ctx: RunContext, scenario: string, n: number): Promise<string[]> {
  const names = Array.from({ length: n }, (_, i) => `kapi-load-${ctx.runId}-${scenario}-${i}`);
  for (const name of names) {
    await ctx.client.must('create', 'namespaces', 'POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [RUN_LABEL]: ctx.runId } } },
    });
  }
  return names;
}

export async function waitForServiceAccounts(ctx: RunContext, namespaces: readonly string[]): Promise<void> {
  const deadline = performance.now() + 30_000;
  for (const ns of namespaces) {
    for (;;) {
      const a = await ctx.client.call('get', 'serviceaccounts', 'GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`);
      if (a.status === 200) break;
      if (performance.now() > deadline) throw new Error(`namespace ${ns}: no default ServiceAccount within 30s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export async function deleteNamespaces(ctx: RunContext, namespaces: readonly string[]): Promise<void> {
  if (!ctx.cleanup) return;
  ctx.phase('cleaning up');
  await Promise.all(namespaces.map((ns) => ctx.client.call('delete', 'namespaces', 'DELETE', `/api/v1/namespaces/${ns}`)));
}

/** the items of a JSON list, following continue tokens */
export async function countItems(ctx: RunContext, resource: string, path: string, query: URLSearchParams): Promise<number> {
  let items = 0;
  let token = '';
  do {
    const q = new URLSearchParams(query);
    q.set('limit', '500');
    if (token) q.set('continue', token);
    const a = await ctx.client.must('list', resource, 'GET', `${path}?${q}`);
    const list = JSON.parse(a.body.toString()) as { items: unknown[]; metadata: { continue?: string } };
    items += list.items.length;
    token = list.metadata.continue ?? '';
  } while (token);
  return items;
}
