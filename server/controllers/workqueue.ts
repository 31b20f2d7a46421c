// A keyed work queue in the manner of client-go's: a key is queued at most once, is never
// processed by two workers at once (adding it while it is processed runs it again after),
// and can be re-added after a delay, with per-key exponential backoff for failures.

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private waiters: Array<() => void> = [];
  private stopped = false;

  constructor(private readonly backoff: BackoffOptions = { baseMs: 500, maxMs: 30_000 }) {}

  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.waiters.shift()?.();
  }

  /** queues `key` after `delayMs`, unless it is already due sooner */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { at, timer });
  }

  /** re-queues after a failure, waiting longer each consecutive time */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** n));
  }

  /** resets the failure count of `key` (call after it succeeded) */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** processes keys with `concurrency` workers until `signal` aborts; resolves once they are idle */
  async run(signal: AbortSignal, concurrency: number, worker: (key: string) => Promise<void>): Promise<void> {
    const onAbort = () => this.shutDown();
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) this.shutDown();
    const loop = async () => {
      for (;;) {
        const key = await this.next();
        if (key === undefined) return;
        this.queued.delete(key);
        this.processing.add(key);
        try {
          await worker(key);
        } finally {
          this.processing.delete(key);
          if (this.dirty.delete(key)) this.add(key);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: concurrency }, loop));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private next(): Promise<string | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => {
      this.waiters.push(() => resolve(this.stopped ? undefined : this.queue.shift()));
    }).then((k) => (k === undefined && !this.stopped ? this.next() : (k as string | undefined)));
  }

  private shutDown(): void {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
