// The audit log of a replica with several worker processes (--workers): one file, written and
// rotated by the primary alone, so lines never interleave and rotation happens once. Each
// worker serializes its events (the CPU cost stays spread over the workers) and sends the
// lines of one tick in one IPC message.

import cluster, { type Worker } from 'node:cluster';
import { encodeJson } from '../request/encode.js';
import type { AuditBackend } from './backend.js';
import type { LogBackend } from './log-backend.js';

interface AuditLinesMessage {
  kapiAuditLines: string[];
}

function isAuditLines(m: unknown): m is AuditLinesMessage {
  return typeof m === 'object' && m !== null && Array.isArray((m as Partial<AuditLinesMessage>).kapiAuditLines);
}

/** In a worker: the log backend that hands its lines to the primary. */
export function relayedLogBackend(
  send: (message: AuditLinesMessage, done: (err: Error | null) => void) => void = (m, done) =>
    process.send?.(m, undefined, undefined, done),
): AuditBackend {
  let batch: string[] = [];
  let scheduled = false;
  let lastSend: Promise<void> = Promise.resolve();
  const flush = (): void => {
    scheduled = false;
    if (batch.length === 0) return;
    const message = { kapiAuditLines: batch };
    batch = [];
    lastSend = new Promise((resolve) => send(message, () => resolve()));
  };
  return {
    name: 'log',
    processEvents(events) {
      for (const ev of events) batch.push(encodeJson(ev));
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    async shutdown() {
      flush();
      await lastSend;
    },
  };
}

/** In the primary: writes the lines every worker sends through `backend`. */
export function receiveRelayedAuditLines(backend: LogBackend): { stop(): void } {
  const onMessage = (_worker: Worker, m: unknown): void => {
    if (isAuditLines(m)) backend.processLines(m.kapiAuditLines);
  };
  cluster.on('message', onMessage);
  return { stop: () => cluster.off('message', onMessage) };
}
