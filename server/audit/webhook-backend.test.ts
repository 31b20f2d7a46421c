import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../storage/testing/etcd-server.js';
import { createWebhookBackend, type BatchOptions } from './webhook-backend.js';

function kubeconfig(dir: string, server: string): string {
  const file = path.join(dir, 'webhook.kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'sink', cluster: { server } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'c', context: { cluster: 'sink', user: 'u' } }],
      'current-context': 'c',
    }),
  );
  return file;
}

const batch = (over: Partial<BatchOptions> = {}): BatchOptions => ({
  bufferSize: 100,
  maxBatchSize: 3,
  maxBatchWaitMs: 60_000,
  throttleEnable: false,
  throttleQPS: 10,
  throttleBurst: 15,
  ...over,
});

function recordingLogger() {
  const errors: string[] = [];
  return { errors, logger: { warn: () => undefined, error: (msg: string) => void errors.push(msg) } };
}

test('batch mode: EventLists of at most max-size events; the rest flushed on shutdown', async () => {
  const received: { kind: string; apiVersion: string; items: { auditID: string }[] }[] = [];
  let failFirst = true;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // one 503 first: the batch is retried, not lost
      if (failFirst) {
        failFirst = false;
        res.writeHead(503).end();
        return;
      }
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as (typeof received)[number]);
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-audit-webhook-'));
  const { errors, logger } = recordingLogger();
  try {
    const port = (server.address() as AddressInfo).port;
    const backend = createWebhookBackend({
      kubeconfigFile: kubeconfig(dir, `http://127.0.0.1:${port}/audit`),
      mode: 'batch',
      initialBackoffMs: 10,
      batch: batch(),
      logger,
    });
    const r = backend.processEvents([1, 2, 3, 4].map((i) => ({ auditID: `a${i}` })));
    assert.equal(r, undefined, 'batch mode never makes the request wait');
    backend.processEvents([{ auditID: 'a5' }]);
    await backend.shutdown();
    assert.deepEqual(errors, []);
    assert.ok(received.every((l) => l.kind === 'EventList' && l.apiVersion === 'audit.k8s.io/v1' && l.items.length <= 3));
    assert.deepEqual(received.flatMap((l) => l.items.map((i) => i.auditID)).sort(), ['a1', 'a2', 'a3', 'a4', 'a5']);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unreachable webhook: retried, then dropped with a log line; blocking mode returns anyway', async () => {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-audit-webhook-'));
  try {
    const file = kubeconfig(dir, `http://127.0.0.1:${port}/`);
    const batched = recordingLogger();
    const b = createWebhookBackend({
      kubeconfigFile: file,
      mode: 'batch',
      initialBackoffMs: 5,
      batch: batch({ maxBatchSize: 1 }),
      logger: batched.logger,
    });
    b.processEvents([{ auditID: 'x' }]);
    await b.shutdown();
    assert.equal(batched.errors.length, 1);
    assert.match(batched.errors[0]!, /Error in audit plugin 'webhook' affecting 1 audit events/);

    const blocking = recordingLogger();
    const s = createWebhookBackend({
      kubeconfigFile: file,
      mode: 'blocking',
      initialBackoffMs: 5,
      batch: batch(),
      logger: blocking.logger,
    });
    assert.equal(await s.processEvents([{ auditID: 'y' }]), true, 'blocking: the request goes on');
    await s.shutdown();
    assert.equal(blocking.errors.length, 1);

    const strict = createWebhookBackend({
      kubeconfigFile: file,
      mode: 'blocking-strict',
      initialBackoffMs: 5,
      batch: batch(),
      logger: recordingLogger().logger,
    });
    assert.equal(await strict.processEvents([{ auditID: 'z' }]), false, 'blocking-strict: the request fails');
    await strict.shutdown();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
