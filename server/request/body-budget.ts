// The replica-wide bound on request bodies being acted on. A body becomes many times its size
// in objects while it is decoded, validated, merged with what is stored and encoded again (a
// 2.4 MB ConfigMap of 200k keys held about 55 MB), and only the in-flight limits bounded how
// many of them one process worked on at once: 150 such creates sent together outgrew V8's heap
// and ended the replica. A body of LARGE_BODY_BYTES or more, once read, holds its size here
// until its response closes; one that does not fit waits, in arrival order, until others are
// done or its request ends (deadline passed, client gone). It waits rather than being refused:
// one thread works through large bodies no faster however many it starts, and interleaving
// them only kept every one alive for the whole time. Smaller bodies never wait here.
//
// The body is held after it is read, not before: a client that announces a large body and
// sends it slowly would otherwise hold the budget from everyone for its whole deadline.

/** bodies at least this large take their size from the budget */
export const LARGE_BODY_BYTES = 64 * 1024;

/** the default budget: 8 MiB, about three bodies of kube's 3 MB limit (a 2.4 MB ConfigMap of
 *  200k keys allocates about 240 MB on its way through) */
export const DEFAULT_BODY_BUDGET_BYTES = 8 * 1024 * 1024;

export interface BodyBudget {
  /** holds `bytes` until the returned release is called, once they fit (a body larger than
   *  the whole budget fits when nothing else is held); rejects when `signal` aborts first */
  hold(bytes: number, signal?: AbortSignal): Promise<() => void>;
  /** bytes held now */
  readonly held: number;
  /** bodies waiting for room now */
  readonly waiting: number;
  /** bodies that had to wait since start */
  readonly waitedCount: number;
}

interface Waiter {
  bytes: number;
  admit(): void;
}

export function createBodyBudget(limitBytes: number): BodyBudget {
  const waiters: Waiter[] = [];
  let held = 0;
  let waitedCount = 0;

  const fits = (bytes: number): boolean => held === 0 || held + bytes <= limitBytes;

  const take = (bytes: number): (() => void) => {
    held += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held -= bytes;
      admitWaiters();
    };
  };

  function admitWaiters(): void {
    while (waiters.length > 0 && fits(waiters[0]!.bytes)) waiters.shift()!.admit();
  }

  return {
    hold(bytes, signal) {
      if (waiters.length === 0 && fits(bytes)) return Promise.resolve(take(bytes));
      waitedCount++;
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          bytes,
          admit: () => {
            signal?.removeEventListener('abort', leave);
            resolve(take(bytes));
          },
        };
        function leave(): void {
          const i = waiters.indexOf(waiter);
          if (i < 0) return;
          waiters.splice(i, 1);
          signal?.removeEventListener('abort', leave);
          reject(signal?.reason instanceof Error ? signal.reason : new Error('request ended while its body waited for room'));
          // the one that left may have been what held back those behind it
          admitWaiters();
        }
        waiters.push(waiter);
        if (signal?.aborted) leave();
        else signal?.addEventListener('abort', leave, { once: true });
      });
    },
    get held() {
      return held;
    },
    get waiting() {
      return waiters.length;
    },
    get waitedCount() {
      return waitedCount;
    },
  };
}

let processBudget = createBodyBudget(DEFAULT_BODY_BUDGET_BYTES);

/** the budget every request body of this process holds from */
export function bodyBudget(): BodyBudget {
  return processBudget;
}

/** sets the process's budget (at start-up, from --max-inflight-body-mib) */
export function setBodyBudget(limitBytes: number): void {
  processBudget = createBodyBudget(limitBytes);
}
