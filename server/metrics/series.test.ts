import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { CounterSeries, HistogramSeries } from './series.js';

const BUCKETS = [0.1, 1, 10];

function pair(): {
  direct: Registry;
  fast: Registry;
  counters: [Counter<'verb' | 'code'>, Counter<'verb' | 'code'>];
  histograms: [Histogram<'verb'>, Histogram<'verb'>];
} {
  const direct = new Registry();
  const fast = new Registry();
  const counter = (r: Registry) =>
    new Counter({ name: 'requests_total', help: 'h', labelNames: ['verb', 'code'] as const, registers: [r] });
  const histogram = (r: Registry) =>
    new Histogram({ name: 'latency_seconds', help: 'h', labelNames: ['verb'] as const, buckets: BUCKETS, registers: [r] });
  return { direct, fast, counters: [counter(direct), counter(fast)], histograms: [histogram(direct), histogram(fast)] };
}

test('series record exactly what prom-client records for the same calls', async () => {
  const { direct, fast, counters, histograms } = pair();
  const total = new CounterSeries(counters[1]);
  const latency = new HistogramSeries(histograms[1]);
  // values on bounds, between them, above the last one, and a repeated series
  const calls: [string, string, number][] = [
    ['GET', '200', 0.05],
    ['GET', '200', 0.1],
    ['GET', '404', 1],
    ['LIST', '200', 5],
    ['GET', '200', 42],
    ['LIST', '200', 0.5],
  ];
  for (const [verb, code, value] of calls) {
    counters[0].inc({ verb, code });
    histograms[0].observe({ verb }, value);
    total.inc(`${verb}/${code}`, () => ({ verb, code }));
    latency.observe(verb, () => ({ verb }), value);
  }
  assert.equal(await fast.metrics(), await direct.metrics());
  assert.match(await fast.metrics(), /requests_total\{verb="GET",code="200"\} 3/);
});

test('series survive a reset and a removed label set', async () => {
  const { direct, fast, counters, histograms } = pair();
  const total = new CounterSeries(counters[1]);
  const latency = new HistogramSeries(histograms[1]);
  const record = (verb: string, value: number) => {
    counters[0].inc({ verb, code: '200' });
    histograms[0].observe({ verb }, value);
    total.inc(verb, () => ({ verb, code: '200' }));
    latency.observe(verb, () => ({ verb }), value);
  };
  record('GET', 0.2);
  fast.resetMetrics();
  direct.resetMetrics();
  record('GET', 0.3);
  for (const c of counters) c.remove({ verb: 'GET', code: '200' });
  for (const h of histograms) h.remove({ verb: 'GET' });
  record('GET', 3);
  record('GET', 3);
  assert.equal(await fast.metrics(), await direct.metrics());
  assert.match(await fast.metrics(), /latency_seconds_count\{verb="GET"\} 2/);
});
