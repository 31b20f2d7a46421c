import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopback } from './target.js';
import { paced, spread } from './pacer.js';
import { protobufListSummary } from './protobuf-list.js';
import { percentile, Recorder } from './recorder.js';
import { renderHtmlReport } from './html-report.js';
import { buildResult } from './result.js';

test('isLoopback: 127/8, ::1 and localhost only', () => {
  for (const h of ['127.0.0.1', '127.3.2.1', '[::1]', 'localhost', 'api.localhost']) assert.equal(isLoopback(h), true, h);
  for (const h of ['10.0.0.1', '192.0.2.1', 'example.com', '[2001:db8::1]', '0.0.0.0']) assert.equal(isLoopback(h), false, h);
});

test('paced: bounded by count, by deadline and by calls in flight', async () => {
  let inFlight = 0;
  let most = 0;
  const started = await paced({ rate: 0, count: 20, deadline: performance.now() + 10_000, concurrency: 3 }, async () => {
    most = Math.max(most, ++inFlight);
    await new Promise((r) => setTimeout(r, 5));
    inFlight--;
  });
  assert.equal(started, 20);
  assert.equal(most, 3);
  const cut = await paced({ rate: 1000, count: 1_000_000, deadline: performance.now() + 50, concurrency: 10 }, async () => {});
  assert.ok(cut < 1_000_000 && cut > 0);
  assert.deepEqual(spread(10, 3), [4, 3, 3]);
});

test('protobufListSummary reads items and the continue token', () => {
  const ld = (field: number, bytes: Buffer): Buffer => Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes]);
  const listMeta = ld(1, Buffer.concat([ld(2, Buffer.from('42')), ld(3, Buffer.from('next-page'))]));
  const list = Buffer.concat([listMeta, ld(2, Buffer.from('a')), ld(2, Buffer.from('b')), ld(2, Buffer.from('c'))]);
  const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), ld(1, Buffer.from('')), ld(2, list)]);
  assert.deepEqual(protobufListSummary(body), { items: 3, continueToken: 'next-page' });
  assert.throws(() => protobufListSummary(Buffer.from('{}')), /not a kube protobuf body/);
});

test('Recorder: per call kind and per replica, errors by code and reason, SLO verdicts', () => {
  const r = new Recorder();
  const at = r.startedAt;
  for (let i = 0; i < 100; i++)
    r.record({ verb: 'create', resource: 'pods', replica: i % 2 ? 'a' : 'b', status: 201, startedAt: at, latencyMs: i < 98 ? 10 : 1500 });
  r.record({ verb: 'create', resource: 'pods', replica: 'a', status: 429, reason: 'TooManyRequests', startedAt: at, latencyMs: 1 });
  r.record({ verb: 'list', resource: 'pods', replica: 'a', status: 0, reason: 'ECONNRESET', startedAt: at, latencyMs: 1 });
  const [create, list] = r.stats(false, 10);
  assert.equal(create!.count, 100);
  assert.equal(create!.errors, 1);
  assert.deepEqual(create!.errorsByCode, { '429 TooManyRequests': 1 });
  assert.equal(create!.p99Ms, 1500);
  assert.equal(create!.sloMet, false);
  assert.deepEqual(list!.errorsByCode, { 'no answer ECONNRESET': 1 });
  assert.deepEqual(
    r
      .stats(true, 10)
      .filter((s) => s.verb === 'create')
      .map((s) => [s.replica, s.count]),
    [
      ['a', 50],
      ['b', 50],
    ],
  );
  assert.equal(percentile([1, 2, 3, 4], 50), 2);
  const result = buildResult({
    scenario: { scenario: 'churn', parameters: {}, delivery: {}, checks: [] },
    server: 'https://127.0.0.1:1',
    startedAt: new Date(),
    wallSeconds: 10,
    recorder: r,
    identityLeases: [],
  });
  assert.equal(result.replicas.toldApart, true);
  assert.equal(result.sloMet, false);
  const html = renderHtmlReport(result);
  assert.match(html, /<svg/);
  assert.doesNotMatch(html, /<script|(src|href)="(https?:)?\/\//, 'no script, nothing fetched');
});
