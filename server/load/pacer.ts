// Runs calls at a target rate: call i is due at start + i/rate. Bounded three ways: by count,
// by a deadline, and by a cap on calls in flight (a slow server slows the run down instead of
// piling up requests without end).

export interface PaceOptions {
  /** calls per second; 0 or less: as fast as `concurrency` allows */
  rate: number;
  count: number;
  /** performance.now() after which no call starts */
  deadline: number;
  concurrency: number;
  signal?: AbortSignal;
}

/** resolves the number of calls started, once every started call has finished */
export async function paced(opts: PaceOptions, call: (i: number) => Promise<void>): Promise<number> {
  const start = performance.now();
  const inFlight = new Set<Promise<void>>();
  let started = 0;
  for (; started < opts.count; started++) {
    if (opts.signal?.aborted) break;
    if (opts.rate > 0) {
      const wait = start + (started * 1000) / opts.rate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    while (inFlight.size >= opts.concurrency) await Promise.race(inFlight);
    if (performance.now() > opts.deadline || opts.signal?.aborted) break;
    const p: Promise<void> = call(started).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  return started;
}

/** `n` items split into `parts` as evenly as they go (`parts` >= 1) */
export function spread(n: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(n / parts) + (i < n % parts ? 1 : 0));
}
