// Where audit events go. A backend takes serialized events; it never throws into the request
// path, and only a blocking webhook makes the request wait for it.

import type { Logger } from '../log.js';
import type { AuditEvent } from './event.js';

export interface AuditBackend {
  readonly name: string;
  /** may return a promise when the backend is configured to block the request (webhook
   *  `blocking` modes); it never rejects. `false` means the events could not be stored and
   *  the backend wants the request failed (`blocking-strict`). */
  processEvents(events: readonly AuditEvent[]): void | Promise<void | boolean>;
  /** flushes what is buffered (bounded by the backend's own retry budget) and stops */
  shutdown(): Promise<void>;
}

/** what the backends log through (kapi's klog-style logger) */
export type AuditLogger = Pick<Logger, 'warn' | 'error'>;

/** Every backend gets every event. */
export function unionBackend(backends: readonly AuditBackend[]): AuditBackend {
  if (backends.length === 1) return backends[0]!;
  return {
    name: `union[${backends.map((b) => b.name).join(',')}]`,
    processEvents(events) {
      const waits: Promise<void | boolean>[] = [];
      for (const b of backends) {
        const r = b.processEvents(events);
        if (r) waits.push(r);
      }
      if (waits.length > 0) return Promise.all(waits).then((results) => !results.includes(false));
      return undefined;
    },
    async shutdown() {
      await Promise.all(backends.map((b) => b.shutdown()));
    },
  };
}
