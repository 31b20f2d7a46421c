// A watcher the way client-go's reflector runs one: list (or not), then watch from the
// list's resourceVersion with bookmarks, and when the stream ends, watch again from the last
// resourceVersion seen (relisting on 410 Gone). Each event goes to a ledger that knows which
// events the scenario expects, so the report can say what was missing, duplicated or out of
// order, and how late it came.

import type { LoadClient } from './http-client.js';

export interface WatchedObject {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

interface WatchEventLine {
  type: string;
  object: WatchedObject & { code?: number };
}

/** Which events a scenario expects each watcher to see once, and when each was sent. */
export class Expectations {
  private readonly sentAt = new Map<string, number>();
  expect(key: string, at: number): void {
    this.sentAt.set(key, at);
  }
  /** a write failed: nobody can see it */
  forget(key: string): void {
    this.sentAt.delete(key);
  }
  sentTime(key: string): number | undefined {
    return this.sentAt.get(key);
  }
  keys(): IterableIterator<string> {
    return this.sentAt.keys();
  }
  get size(): number {
    return this.sentAt.size;
  }
}

export interface DeliveryStats {
  watchers: number;
  expectedPerWatcher: number;
  delivered: number;
  missing: number;
  duplicated: number;
  outOfOrder: number;
  reconnects: number;
  relists: number;
  /** ms from the write being sent to the event arriving */
  lagP50Ms?: number;
  lagP99Ms?: number;
  lagMaxMs?: number;
}

export interface InformerOptions {
  /** the collection path, without query (e.g. /api/v1/pods) */
  path: string;
  /** labelSelector / fieldSelector query parameters */
  selectors: URLSearchParams;
  /** the key of an event the scenario counts, or undefined to ignore it */
  keyOf(type: string, object: WatchedObject): string | undefined;
  expectations: Expectations;
  /** list before watching (an informer) or watch from now (rv from a prior write) */
  startResourceVersion?: string;
}

export class Informer {
  readonly seen = new Map<string, number>();
  readonly lags: number[] = [];
  outOfOrder = 0;
  reconnects = 0;
  relists = 0;
  replica = '';
  private lastRv = 0;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    private readonly client: LoadClient,
    private readonly opts: InformerOptions,
  ) {}

  /** resolves once the first watch is open */
  async start(resource: string): Promise<void> {
    let rv = this.opts.startResourceVersion;
    if (rv === undefined) rv = await this.list(resource);
    const first = await this.openWatch(resource, rv);
    if (first.status !== 200) throw new Error(`watch ${this.opts.path}: HTTP ${first.status || 'no answer'}`);
    this.running = this.keepWatching(resource, first.ended);
  }

  private async list(resource: string): Promise<string> {
    const q = new URLSearchParams(this.opts.selectors);
    q.set('resourceVersion', '0');
    const a = await this.client.must('list', resource, 'GET', `${this.opts.path}?${q}`);
    const list = JSON.parse(a.body.toString()) as { metadata: { resourceVersion: string }; items: WatchedObject[] };
    for (const item of list.items) this.count(this.opts.keyOf('ADDED', item));
    return list.metadata.resourceVersion;
  }

  private openWatch(resource: string, rv: string): Promise<{ status: number; ended: Promise<void> }> {
    const q = new URLSearchParams(this.opts.selectors);
    q.set('watch', '1');
    q.set('allowWatchBookmarks', 'true');
    q.set('resourceVersion', rv);
    return this.client
      .openWatch(`${this.opts.path}?${q}`, (line) => this.onLine(resource, line), this.abort.signal)
      .then((w) => {
        this.replica = w.replica;
        return w;
      });
  }

  private async keepWatching(resource: string, ended: Promise<void>): Promise<void> {
    for (;;) {
      await ended;
      if (this.abort.signal.aborted) return;
      this.reconnects++;
      await new Promise((r) => setTimeout(r, 200));
      const w = await this.openWatch(resource, String(this.lastRv));
      ended = w.ended;
    }
  }

  private onLine(resource: string, line: string): void {
    let ev: WatchEventLine;
    try {
      ev = JSON.parse(line) as WatchEventLine;
    } catch {
      return;
    }
    if (ev.type === 'ERROR') {
      // 410: the resourceVersion is gone; relist as a reflector would
      if (ev.object.code === 410) {
        this.relists++;
        void this.list(resource).then(
          (rv) => (this.lastRv = Number(rv)),
          () => {},
        );
      }
      return;
    }
    const rv = Number(ev.object.metadata.resourceVersion ?? 0);
    if (ev.type !== 'BOOKMARK') {
      if (rv <= this.lastRv) this.outOfOrder++;
      this.count(this.opts.keyOf(ev.type, ev.object));
    }
    if (rv > this.lastRv) this.lastRv = rv;
  }

  private count(key: string | undefined): void {
    if (key === undefined) return;
    this.seen.set(key, (this.seen.get(key) ?? 0) + 1);
    const sent = this.opts.expectations.sentTime(key);
    if (sent !== undefined) this.lags.push(performance.now() - sent);
  }

  /** how many expected events have not arrived yet */
  missing(): number {
    let n = 0;
    for (const key of this.opts.expectations.keys()) if (!this.seen.has(key)) n++;
    return n;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }
}

/** waits until every informer has every expected event, or `timeoutMs` passes */
export async function settle(informers: readonly Informer[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline && informers.some((i) => i.missing() > 0)) await new Promise((r) => setTimeout(r, 100));
}

/** one figure for several groups of watchers, each with its own expectations */
export function mergeDelivery(parts: readonly DeliveryStats[]): DeliveryStats {
  const sum = (f: (d: DeliveryStats) => number): number => parts.reduce((n, d) => n + f(d), 0);
  const max = (f: (d: DeliveryStats) => number | undefined): number | undefined => {
    const xs = parts.map(f).filter((x): x is number => x !== undefined);
    return xs.length ? Math.max(...xs) : undefined;
  };
  return {
    watchers: sum((d) => d.watchers),
    expectedPerWatcher: max((d) => d.expectedPerWatcher) ?? 0,
    delivered: sum((d) => d.delivered),
    missing: sum((d) => d.missing),
    duplicated: sum((d) => d.duplicated),
    outOfOrder: sum((d) => d.outOfOrder),
    reconnects: sum((d) => d.reconnects),
    relists: sum((d) => d.relists),
    // the worst group's percentiles: an upper bound, never an average that hides a slow group
    lagP50Ms: max((d) => d.lagP50Ms),
    lagP99Ms: max((d) => d.lagP99Ms),
    lagMaxMs: max((d) => d.lagMaxMs),
  };
}

export function deliveryStats(informers: readonly Informer[], expectations: Expectations): DeliveryStats {
  const lags = informers.flatMap((i) => i.lags).sort((a, b) => a - b);
  let delivered = 0;
  let duplicated = 0;
  for (const i of informers) {
    for (const key of expectations.keys()) {
      const n = i.seen.get(key) ?? 0;
      if (n > 0) delivered++;
      if (n > 1) duplicated += n - 1;
    }
  }
  const at = (p: number): number | undefined =>
    lags.length ? lags[Math.min(lags.length - 1, Math.ceil((p / 100) * lags.length) - 1)] : undefined;
  return {
    watchers: informers.length,
    expectedPerWatcher: expectations.size,
    delivered,
    missing: informers.reduce((n, i) => n + i.missing(), 0),
    duplicated,
    outOfOrder: informers.reduce((n, i) => n + i.outOfOrder, 0),
    reconnects: informers.reduce((n, i) => n + i.reconnects, 0),
    relists: informers.reduce((n, i) => n + i.relists, 0),
    lagP50Ms: at(50),
    lagP99Ms: at(99),
    lagMaxMs: lags.at(-1),
  };
}
