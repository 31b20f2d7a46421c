// One priority level's seats and queues. A request takes a seat when one is free and nobody
// waits; otherwise a Reject level turns it away, and a Queue level puts it in the shortest of
// the `handSize` queues its flow is dealt (shuffle sharding), or turns it away when that queue
// is full. A freed seat goes to the head of the next non-empty queue, round robin, so flows
// in different queues take turns. (kube's virtual-time fair queuing is simplified to this.)

import type { QueuingConfig } from './config.js';

export type Outcome = { admitted: true; release: () => void } | { admitted: false; reason: 'rejected' | 'timeout' | 'cancelled' };

interface Waiter {
  resolve: (o: Outcome) => void;
  cleanup: () => void;
}

export interface QueueSetStats {
  concurrencyLimit: number;
  executing: number;
  waiting: number;
}

/** Deals `handSize` distinct queue indexes out of `queues` from a hash (kube's shuffle sharding). */
export function dealHand(hash: number, queues: number, handSize: number): number[] {
  const hand: number[] = [];
  const remaining = Array.from({ length: queues }, (_, i) => i);
  let h = hash;
  for (let i = 0; i < handSize && remaining.length > 0; i++) {
    const n = remaining.length;
    const pick = h % n;
    h = Math.floor(h / n);
    hand.push(remaining[pick]!);
    remaining.splice(pick, 1);
  }
  return hand;
}

export class QueueSet {
  private executing = 0;
  private queues: Waiter[][] = [];
  private nextQueue = 0;

  constructor(
    private concurrencyLimit: number,
    private queuing: QueuingConfig | undefined,
  ) {
    this.resizeQueues();
  }

  /** new limits from a changed configuration; waiting requests keep their places */
  configure(concurrencyLimit: number, queuing: QueuingConfig | undefined): void {
    this.concurrencyLimit = concurrencyLimit;
    this.queuing = queuing;
    this.resizeQueues();
    this.dispatch();
  }

  get stats(): QueueSetStats {
    return { concurrencyLimit: this.concurrencyLimit, executing: this.executing, waiting: this.waiting() };
  }

  queueLengths(): number[] {
    return this.queues.map((q) => q.length);
  }

  get idle(): boolean {
    return this.executing === 0 && this.waiting() === 0;
  }

  private waiting(): number {
    return this.queues.reduce((n, q) => n + q.length, 0);
  }

  private resizeQueues(): void {
    const want = this.queuing ? this.queuing.queues : 0;
    // queues past the new count keep their waiters until they drain
    while (this.queues.length < want) this.queues.push([]);
    while (this.queues.length > want && this.queues[this.queues.length - 1]!.length === 0) this.queues.pop();
  }

  private seat(): () => void {
    this.executing++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.executing--;
      this.dispatch();
    };
  }

  /**
   * Waits for a seat. `flowHashOf` gives the number that chooses the queues, asked for only
   * when the request has to queue (hashing costs more than the rest of an uncontended
   * admission); the signal `signalOf` gives ends the wait when the client goes away (asked for
   * only when the request has to wait: a request's signal is made on demand,
   * request/cancellation.ts); `maxWaitMs` bounds the time in a queue (kube: a quarter of the
   * request timeout).
   */
  acquire(flowHashOf: () => number, signalOf?: () => AbortSignal, maxWaitMs?: number): Promise<Outcome> {
    if (this.executing < this.concurrencyLimit && this.waiting() === 0) return Promise.resolve({ admitted: true, release: this.seat() });
    const signal = signalOf?.();
    if (signal?.aborted) return Promise.resolve({ admitted: false, reason: 'cancelled' });
    const q = this.queuing;
    if (!q) return Promise.resolve({ admitted: false, reason: 'rejected' });
    const hand = dealHand(flowHashOf(), q.queues, q.handSize);
    let best = hand[0]!;
    for (const i of hand) if (this.queues[i]!.length < this.queues[best]!.length) best = i;
    const queue = this.queues[best]!;
    if (queue.length >= q.queueLengthLimit) return Promise.resolve({ admitted: false, reason: 'rejected' });
    return new Promise<Outcome>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (reason: 'timeout' | 'cancelled') => {
        const at = queue.indexOf(waiter);
        if (at < 0) return;
        queue.splice(at, 1);
        waiter.cleanup();
        resolve({ admitted: false, reason });
      };
      const onAbort = () => leave('cancelled');
      const waiter: Waiter = {
        resolve,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (maxWaitMs !== undefined && maxWaitMs > 0) timer = setTimeout(() => leave('timeout'), maxWaitMs);
    });
  }

  private dispatch(): void {
    while (this.executing < this.concurrencyLimit) {
      const n = this.queues.length;
      let found: Waiter | undefined;
      for (let k = 0; k < n && !found; k++) {
        const i = (this.nextQueue + k) % n;
        if (this.queues[i]!.length > 0) {
          found = this.queues[i]!.shift();
          this.nextQueue = (i + 1) % n;
        }
      }
      if (!found) break;
      found.cleanup();
      found.resolve({ admitted: true, release: this.seat() });
    }
    this.resizeQueues();
  }
}
