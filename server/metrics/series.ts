// Per-request recording without prom-client's per-call label work. `counter.inc(labels)` and
// `histogram.observe(labels, v)` validate the labels object and build its hash string on every
// call; on the request path that is most of what metrics cost. A series here is resolved once
// per distinct label set (the caller names it by a key it already has) and later recordings
// add to prom-client's own stored value for it, so /metrics, `get()`, reset and remove behave
// as before. Tied to prom-client 15's stored shape (a counter's `value`, a histogram's `sum`,
// `count` and `bucketValues` by upper bound); series.test.ts compares both paths' output.

import type { Counter, Histogram } from 'prom-client';

type Labels<T extends string> = Partial<Record<T, string | number>>;

interface CounterEntry {
  value: number;
}

interface HistogramEntry {
  sum: number;
  count: number;
  bucketValues: Record<number, number>;
}

interface Stored<E> {
  hashMap: Record<string, E>;
}

interface Resolved<E> {
  hash: string;
  entry: E;
}

/** the stored entry prom-client made for exactly this labels object (found once per series) */
function storedEntry<E extends { labels?: unknown }>(metric: Stored<E>, labels: object): Resolved<E> | undefined {
  for (const [hash, entry] of Object.entries(metric.hashMap)) if (entry.labels === labels) return { hash, entry };
  return undefined;
}

/** still the entry prom-client reads (not reset or removed since) */
function current<E>(metric: Stored<E>, r: Resolved<E> | undefined): r is Resolved<E> {
  return r !== undefined && metric.hashMap[r.hash] === r.entry;
}

export class CounterSeries<T extends string> {
  private readonly byKey = new Map<string, Resolved<CounterEntry & { labels?: unknown }>>();
  private readonly stored: Stored<CounterEntry & { labels?: unknown }>;

  constructor(private readonly counter: Counter<T>) {
    this.stored = counter as unknown as Stored<CounterEntry & { labels?: unknown }>;
  }

  /** adds 1; `labels` is called only the first time `key` is seen (or after a reset) */
  inc(key: string, labels: () => Labels<T>): void {
    const known = this.byKey.get(key);
    if (current(this.stored, known)) {
      known.entry.value += 1;
      return;
    }
    const fresh = labels();
    this.counter.inc(fresh, 1);
    const resolved = storedEntry(this.stored, fresh);
    if (resolved) this.byKey.set(key, resolved);
  }
}

export class HistogramSeries<T extends string> {
  private readonly byKey = new Map<string, Resolved<HistogramEntry & { labels?: unknown }>>();
  private readonly stored: Stored<HistogramEntry & { labels?: unknown }>;
  private readonly upperBounds: readonly number[];

  constructor(private readonly histogram: Histogram<T>) {
    this.stored = histogram as unknown as Stored<HistogramEntry & { labels?: unknown }>;
    this.upperBounds = (histogram as unknown as { upperBounds: readonly number[] }).upperBounds;
  }

  /** records `value`; `labels` is called only the first time `key` is seen (or after a reset) */
  observe(key: string, labels: () => Labels<T>, value: number): void {
    const known = this.byKey.get(key);
    if (!current(this.stored, known) || !Number.isFinite(value)) {
      const fresh = labels();
      this.histogram.observe(fresh, value);
      const resolved = storedEntry(this.stored, fresh);
      if (resolved) this.byKey.set(key, resolved);
      return;
    }
    const entry = known.entry;
    entry.sum += value;
    entry.count += 1;
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      const bound = bounds[i]!;
      if (value <= bound) {
        entry.bucketValues[bound]! += 1;
        return;
      }
    }
  }
}
