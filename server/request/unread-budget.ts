// The replica-wide bound on memory held for clients that do not take their responses. A
// response body is encoded whole before it is written; until the client has taken it, its
// bytes stay in this process. Each large body is booked here until its response is written.
// When the booked bytes exceed the budget, the response that has waited longest for its client
// is cut (its HTTP/1.1 connection destroyed, its HTTP/2 stream reset), as kube-apiserver ends a
// watcher whose buffer is full: a client that reads takes its body and leaves the books, so
// those still booked longest are the ones that stopped reading.
//
// Together with the request timeout (which cuts every non-long-running response not taken by
// its deadline) and the in-flight limits (a response holds its seat until it is written), this
// bounds what unread responses cost: at most the budget, or one body when a single body is
// larger than the budget.

/** one body being written */
export interface BookedBody {
  /** the body is written, or its response is gone */
  release(): void;
}

export interface UnreadResponseBudget {
  /** books `bytes` for a body; `cut` ends its response should the budget need the room */
  book(bytes: number, cut: () => void): BookedBody;
  /** bytes booked now */
  readonly booked: number;
  /** the budget in bytes */
  readonly limit: number;
  /** responses cut to stay within the budget since start */
  readonly cutCount: number;
}

interface Entry {
  bytes: number;
  bookedAt: number;
  cut: () => void;
}

export function createUnreadResponseBudget(limitBytes: number, now: () => number = Date.now): UnreadResponseBudget {
  const entries = new Set<Entry>();
  let booked = 0;
  let cutCount = 0;

  const release = (entry: Entry): void => {
    if (!entries.delete(entry)) return;
    booked -= entry.bytes;
  };

  /** cuts the longest-waiting responses until the booked bytes fit (one body always stays) */
  const makeRoom = (): void => {
    while (booked > limitBytes && entries.size > 1) {
      let stalest: Entry | undefined;
      for (const e of entries) if (!stalest || e.bookedAt < stalest.bookedAt) stalest = e;
      release(stalest!);
      cutCount++;
      stalest!.cut();
    }
  };

  return {
    book(bytes, cut) {
      const entry: Entry = { bytes, bookedAt: now(), cut };
      entries.add(entry);
      booked += bytes;
      makeRoom();
      return { release: () => release(entry) };
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
