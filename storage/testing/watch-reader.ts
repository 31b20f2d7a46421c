// Reads a storage Watch one event at a time with a liveness bound, for tests. The bound only
// keeps a broken implementation from hanging the run; no test asserts on how long anything took.

import type { Watch, WatchEvent } from '../interface.js';

export const END = Symbol('watch ended');

export class WatchReader {
  private readonly it: AsyncIterator<WatchEvent>;
  /** a next() that timed out is kept and reused, so no event is skipped by a later call */
  private pending: Promise<IteratorResult<WatchEvent>> | undefined;

  constructor(
    readonly watch: Watch,
    private readonly timeoutMs = 15000,
  ) {
    this.it = watch[Symbol.asyncIterator]();
  }

  /** the next event, END when the watch ended; throws when nothing arrives in time */
  async next(what = 'a watch event'): Promise<WatchEvent | typeof END> {
    this.pending ??= this.it.next();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
    });
    try {
      const r = await Promise.race([this.pending, timeout]);
      if (r === 'timeout') throw new Error(`timed out waiting for ${what}`);
      this.pending = undefined;
      return r.done ? END : r.value;
    } finally {
      clearTimeout(timer);
    }
  }

  /** the next event, which must exist */
  async event(what?: string): Promise<WatchEvent> {
    const e = await this.next(what);
    if (e === END) throw new Error(`watch ended while waiting for ${what ?? 'an event'}`);
    return e;
  }

  /** the next event that is not a BOOKMARK (periodic bookmarks may come at any time) */
  async change(what?: string): Promise<WatchEvent> {
    for (;;) {
      const e = await this.event(what);
      if (e.type !== 'BOOKMARK') return e;
    }
  }

  /** the next `n` non-BOOKMARK events */
  async changes(n: number, what?: string): Promise<WatchEvent[]> {
    const out: WatchEvent[] = [];
    while (out.length < n) out.push(await this.change(what));
    return out;
  }

  stop(): void {
    this.watch.stop();
  }
}

/** a short, readable summary of an event for assertions: `ADDED name@rv` */
export function describeEvent(e: WatchEvent): string {
  return `${e.type} ${e.object.metadata?.name ?? ''}@${e.object.metadata?.resourceVersion ?? ''}`;
}
