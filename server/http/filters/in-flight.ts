// What graceful shutdown waits for: the non-long-running requests in flight (kube-apiserver's
// NonLongRunningRequestWaitGroup) and the open watches (its WatchRequestWaitGroup, drained
// within --shutdown-watch-termination-grace-period). A request counts until its response closes.
// Each watch gets a signal of its own, so shutdown can end the watches one after another.

import type { Filter, HttpResponse, RequestState } from '../../request/types.js';
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
   * Ends the open watches cleanly, spread out as kube-apiserver spreads them (at
   * max(count / grace, 200) per second, so their clients do not all come back at once), and
   * resolves once none is open; whatever is still open after `graceMs` is cut.
   */
  endWatches(graceMs: number): Promise<void>;
}

/** kube-apiserver's floor for the rate at which watches are ended on shutdown */
const MIN_WATCH_END_RATE = 200;

/** the state with a signal that also fires when `extra` does; everything else is shared */
function withExtraSignal(state: RequestState, extra: AbortSignal): RequestState {
  const signal = AbortSignal.any([state.signal, extra]);
  return new Proxy(state, {
    get(target, prop, receiver) {
      if (prop === 'signal') return signal;
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

export function createRequestTracker(): RequestTracker {
  let nonLongRunning = 0;
  /** open watch responses and what ends each of them */
  const watches = new Map<HttpResponse, AbortController>();
  const waiters = new Set<() => void>();
  const changed = (): void => {
    if (waiters.size === 0) return;
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
    // not an async layer of its own: the request goes on in the same promise
    filter: (next) => (state) => {
      const res = state.res;
      if (state.info.verb === 'watch') {
        const end = new AbortController();
        watches.set(res, end);
        res.once('close', () => {
          watches.delete(res);
          changed();
        });
        return next(withExtraSignal(state, end.signal));
      } else if (!isLongRunning(state.info)) {
        nonLongRunning++;
        res.once('close', () => {
          nonLongRunning--;
          changed();
        });
      }
      return next(state);
    },
    get nonLongRunning() {
      return nonLongRunning;
    },
    get watches() {
      return watches.size;
    },
    nonLongRunningDrained: () => until(() => nonLongRunning === 0).promise,
    async endWatches(graceMs) {
      const wait = until(() => watches.size === 0);
      let graceTimer: NodeJS.Timeout | undefined;
      let over = false;
      const graceOver = new Promise<void>((resolve) => {
        graceTimer = setTimeout(
          () => {
            over = true;
            resolve();
          },
          Math.max(0, graceMs),
        );
      });
      // one watch ended per tick of the rate; those opened meanwhile are ended as well
      const perSecond = Math.max(watches.size / Math.max(graceMs / 1000, 0.001), MIN_WATCH_END_RATE);
      const intervalMs = 1000 / perSecond;
      const ending = (async () => {
        for (;;) {
          const next = [...watches.values()].find((c) => !c.signal.aborted);
          if (!next || over) return;
          next.abort();
          await new Promise((r) => setTimeout(r, intervalMs));
        }
      })();
      await Promise.race([wait.promise, graceOver]);
      clearTimeout(graceTimer);
      over = true;
      await ending;
      wait.cancel();
      for (const res of watches.keys()) if (!res.destroyed) res.destroy();
    },
  };
}
