// What graceful shutdown waits for: the non-long-running requests in flight (kube-apiserver's
// NonLongRunningRequestWaitGroup) and the open watches (its WatchRequestWaitGroup, drained
// within --shutdown-watch-termination-grace-period). A request counts until its response closes.

import type { Filter, HttpResponse } from '../types.js';
import { isLongRunning } from './long-running.js';

export interface RequestTracker {
  readonly filter: Filter;
  /** non-long-running requests being answered now */
  readonly nonLongRunning: number;
  /** watch responses open now */
  readonly watches: number;
  /** resolves once no non-long-running request is in flight */
  nonLongRunningDrained(): Promise<void>;
  /**
   * resolves once no watch is open, or after `graceMs`, when the watches still open are cut
   * (their clients see the stream break and re-list elsewhere)
   */
  watchesDrained(graceMs: number): Promise<void>;
}

export function createRequestTracker(): RequestTracker {
  let nonLongRunning = 0;
  const watches = new Set<HttpResponse>();
  const waiters = new Set<() => void>();
  const changed = (): void => {
    for (const w of [...waiters]) w();
  };
  const until = (done: () => boolean): { promise: Promise<void>; cancel(): void } => {
    let check: () => void = () => {};
    const promise = new Promise<void>((resolve) => {
      check = () => {
        if (!done()) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
    return { promise, cancel: () => waiters.delete(check) };
  };

  return {
    filter: (next) => async (state) => {
      const res = state.res;
      if (state.info.verb === 'watch') {
        watches.add(res);
        res.once('close', () => {
          watches.delete(res);
          changed();
        });
      } else if (!isLongRunning(state.info)) {
        nonLongRunning++;
        res.once('close', () => {
          nonLongRunning--;
          changed();
        });
      }
      await next(state);
    },
    get nonLongRunning() {
      return nonLongRunning;
    },
    get watches() {
      return watches.size;
    },
    nonLongRunningDrained: () => until(() => nonLongRunning === 0).promise,
    async watchesDrained(graceMs) {
      const wait = until(() => watches.size === 0);
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, graceMs));
      });
      await Promise.race([wait.promise, graceOver]);
      clearTimeout(timer);
      wait.cancel();
      for (const res of watches) if (!res.destroyed) res.destroy();
    },
  };
}
