// What one Service write allocated and what it will free. etcd gives no transaction spanning
// the allocation keys and the Service itself, so the write keeps a ledger: values taken now
// are given back if the Service is not written (revert); values the Service stops using are
// freed only once it is written (commit), so a failed update never loses what it held.

import { createLogger } from '../log.js';

const log = createLogger('allocators');

type Step = { what: string; run: () => Promise<unknown> };

export class AllocationLedger {
  private readonly undo: Step[] = [];
  private readonly deferred: Step[] = [];
  private done = false;

  /** `run` gives back something taken by this write */
  onRevert(what: string, run: () => Promise<unknown>): void {
    this.undo.push({ what, run });
  }

  /** `run` frees something the written Service no longer uses */
  onCommit(what: string, run: () => Promise<unknown>): void {
    this.deferred.push({ what, run });
  }

  async commit(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await runAll(this.deferred, 'releasing');
  }

  async revert(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await runAll([...this.undo].reverse(), 'giving back');
  }

  /** the registry's finish function */
  finish(): (succeeded: boolean) => Promise<void> {
    return (succeeded) => (succeeded ? this.commit() : this.revert());
  }
}

async function runAll(steps: Step[], verb: string): Promise<void> {
  for (const s of steps) {
    try {
      await s.run();
    } catch (err) {
      // the repair loop frees what is left behind
      log.warn(`${verb} an allocation failed`, { allocation: s.what, error: (err as Error).message });
    }
  }
}
