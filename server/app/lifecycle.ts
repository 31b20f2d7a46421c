// What start-up has started, stopped in reverse order: on shutdown, and when a later step of
// start-up fails (so a failed start leaves no etcd member, timer or open file behind).

import { createLogger } from '../log.js';

const log = createLogger('kapi');

/** Something started that must be stopped, in reverse start order. */
export interface Stoppable {
  readonly name: string;
  stop(): Promise<void> | void;
}

export class StopStack {
  private readonly started: Stoppable[] = [];

  push(name: string, stop: () => Promise<void> | void): void {
    this.started.push({ name, stop });
  }

  /** stops everything pushed so far, newest first; a failure is logged and the rest still stop */
  async stopAll(): Promise<void> {
    for (const s of this.started.splice(0).reverse()) {
      try {
        await s.stop();
        log.v(1).info('stopped', { component: s.name });
      } catch (err) {
        log.error('stopping failed', { component: s.name, error: (err as Error).message });
      }
    }
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
