import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { sendToBackend } from './forward.js';

test('a request cancelled before it is sent to the backend ends at once (the backend would never answer)', async () => {
  let received = 0;
  const silent = http.createServer(() => {
    received++;
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as net.AddressInfo).port;
  const cancelled = new AbortController();
  cancelled.abort();
  try {
    const backend = { url: new URL(`http://127.0.0.1:${port}/containerLogs/ns/pod/c?follow=true`), connectTimeoutMs: 5_000 };
    const outcome = await Promise.race([
      sendToBackend(backend, 'GET', { host: backend.url.host }, undefined, cancelled.signal).then(
        () => 'answered',
        () => 'ended',
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 1_000).unref()),
    ]);
    assert.equal(outcome, 'ended');
    assert.equal(received, 0, 'the backend saw no request');
  } finally {
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});
