import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogBackend } from './log-backend.js';
import { relayedLogBackend } from './relay.js';
import type { AuditEvent } from './event.js';

const quiet = { warn: () => undefined, error: () => undefined };
const event = (i: number) =>
  ({ kind: 'Event', apiVersion: 'audit.k8s.io/v1', auditID: `id-${i}`, requestURI: `/x?a=<${i}>` }) as unknown as AuditEvent;

test("a worker's audit events reach the primary's log file as the lines the log backend writes itself", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-audit-relay-'));
  try {
    const relayed = createLogBackend({
      path: path.join(dir, 'relayed.log'),
      maxSizeMB: 0,
      maxBackups: 0,
      maxAgeDays: 0,
      compress: false,
      logger: quiet,
    });
    const direct = createLogBackend({
      path: path.join(dir, 'direct.log'),
      maxSizeMB: 0,
      maxBackups: 0,
      maxAgeDays: 0,
      compress: false,
      logger: quiet,
    });
    const messages: string[][] = [];
    // the IPC channel, with its asynchronous delivery
    const worker = relayedLogBackend((m, done) =>
      setImmediate(() => {
        messages.push(m.kapiAuditLines);
        relayed.processLines(m.kapiAuditLines);
        done(null);
      }),
    );
    worker.processEvents([event(1), event(2)]);
    worker.processEvents([event(3)]);
    direct.processEvents([event(1), event(2), event(3)]);
    // shutdown waits until the last lines are handed over
    await worker.shutdown();
    assert.equal(messages.length, 1, 'the events of one tick travel in one message');
    await relayed.shutdown();
    await direct.shutdown();
    const text = readFileSync(path.join(dir, 'relayed.log'), 'utf8');
    assert.equal(text, readFileSync(path.join(dir, 'direct.log'), 'utf8'));
    assert.equal(text.split('\n').length, 4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
