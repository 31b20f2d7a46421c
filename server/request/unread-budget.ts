// The replica-wide bound on memory for responses: those being produced (a list decoded,
// converted and encoded whole) and those held for clients that have not taken them yet.
//
// A response books its bytes here. One being produced reserves an estimate before it starts
// (reserve): when the books are full it waits for room, and is refused (kube's 429) if none
// comes in time, so no number of concurrent large lists can grow the process past the budget
// while they are built. A body waiting for its client is booked as held (book); when the
// booked bytes exceed the budget, the held response that has waited longest is cut (its
// HTTP/1.1 connection destroyed, its HTTP/2 stream reset), as kube-apiserver ends a watcher
// whose buffer is full: a client that reads takes its body and leaves the books, so those
// still booked longest are the ones that stopped reading. Streamed responses hold only what
// is in flight to the socket and book that.
//
// Together with the request timeout (which cuts every non-long-running response not taken by
// its deadline) and the in-flight limits (a response holds its seat until it is written), this
// bounds what responses cost: at most the budget, or one response when a single one is larger.

import { errors } from '../machinery/status.js';

/** bytes booked for one response */
export interface BookedBody {
  /** the body is written, or its response is gone */
  release(): void;
}

export interface UnreadResponseBudget {
  /** books `bytes` held for a client; `cut` ends its response should the budget need the room */
  book(bytes: number, cut: () => void): BookedBody;
  /** books `bytes` for a response about to be produced, once they fit (cutting held responses
   *  that waited longest, then waiting for others to finish); rejects with a 429 when no room
   *  comes within the wait or `signal` aborts */
  reserve(bytes: number, signal?: AbortSignal): Promise<BookedBody>;
  /** bytes booked now */
  readonly booked: number;
  /** the budget in bytes */
  readonly limit: number;
  /** responses cut to stay within the budget since start */
  readonly cutCount: number;
  /** reservations refused since start */
  readonly refusedCount: number;
}

interface Entry {
  bytes: number;
  bookedAt: number;
  /** set for a held response, which may be cut */
  cut?: () => void;
}

interface Waiter {
  bytes: number;
  admit: () => void;
}

/** how long a response to be produced waits for room before it is refused */
export const RESERVE_WAIT_MS = 5_000;

export function createUnreadResponseBudget(
  limitBytes: number,
  now: () => number = Date.now,
  reserveWaitMs: number = RESERVE_WAIT_MS,
): UnreadResponseBudget {
  const entries = new Set<Entry>();
  const waiters: Waiter[] = [];
  let booked = 0;
  let cutCount = 0;
  let refusedCount = 0;

  const release = (entry: Entry): void => {
    if (!entries.delete(entry)) return;
    booked -= entry.bytes;
    admitWaiters();
  };

  const add = (entry: Entry): BookedBody => {
    entries.add(entry);
    booked += entry.bytes;
    return { release: () => release(entry) };
  };

  /** cuts the held responses that waited longest until `wanted` more bytes fit; `keepOne`
   *  leaves the last entry alone (a single body larger than the budget) */
  const makeRoom = (wanted: number, keepOne: boolean): void => {
    while (booked + wanted > limitBytes && entries.size > (keepOne ? 1 : 0)) {
      let stalest: Entry | undefined;
      for (const e of entries) if (e.cut && (!stalest || e.bookedAt < stalest.bookedAt)) stalest = e;
      if (!stalest) return;
      release(stalest);
      cutCount++;
      stalest.cut!();
    }
  };

  const fits = (bytes: number): boolean => booked === 0 || booked + bytes <= limitBytes;

  function admitWaiters(): void {
    while (waiters.length > 0 && fits(waiters[0]!.bytes)) waiters.shift()!.admit();
  }

  return {
    book(bytes, cut) {
      const booking = add({ bytes, bookedAt: now(), cut });
      makeRoom(0, true);
      return booking;
    },
    reserve(bytes, signal) {
      if (waiters.length === 0) {
        makeRoom(bytes, false);
        if (fits(bytes)) return Promise.resolve(add({ bytes, bookedAt: now() }));
      }
      return new Promise<BookedBody>((resolve, reject) => {
        const waiter: Waiter = {
          bytes,
          admit: () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', refuse);
            resolve(add({ bytes, bookedAt: now() }));
          },
        };
        function refuse(): void {
          const i = waiters.indexOf(waiter);
          if (i < 0) return;
          waiters.splice(i, 1);
          clearTimeout(timer);
          signal?.removeEventListener('abort', refuse);
          refusedCount++;
          reject(errors.tooManyRequests('Too many requests, please try again later.', 1));
        }
        const timer = setTimeout(refuse, reserveWaitMs);
        signal?.addEventListener('abort', refuse, { once: true });
        waiters.push(waiter);
        // a signal aborted already fires no 'abort': the request whose client is gone would
        // hold its place in the queue for the whole wait
        if (signal?.aborted) refuse();
      });
    },
    get booked() {
      return booked;
    },
    get limit() {
      return limitBytes;
    },
    get cutCount() {
      return cutCount;
    },
    get refusedCount() {
      return refusedCount;
    },
  };
}

/** the default budget: 256 MiB */
export const DEFAULT_UNREAD_RESPONSE_BUDGET_BYTES = 256 * 1024 * 1024;

let processBudget = createUnreadResponseBudget(DEFAULT_UNREAD_RESPONSE_BUDGET_BYTES);

/** the budget every response of this process books from */
export function unreadResponseBudget(): UnreadResponseBudget {
  return processBudget;
}

/** sets the process's budget (at start-up, from --max-unread-response-mib) */
export function setUnreadResponseBudget(limitBytes: number): void {
  processBudget = createUnreadResponseBudget(limitBytes);
}
