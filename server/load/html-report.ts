// report.html: one self-contained file (inline CSS and SVG, no script, no external asset)
// with the run's verdicts, the calls against kube's SLOs, watch delivery, the checks, and plots
// of throughput and latency over time, per call kind and per replica.

import type { CallStats, TimePoint } from './recorder.js';
import type { LoadResult } from './result.js';
import { escapeHtml as h, lineChart, type ChartSeries } from './svg-chart.js';

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1b1f24;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #d8dde3;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{padding:3px 10px;border-bottom:1px solid #eef0f2;text-align:left;white-space:nowrap}
th{color:#5a6470}td.n{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1a7f37;font-weight:600}.bad{color:#c62828;font-weight:600}.muted{color:#5a6470}
.verdicts span{display:inline-block;margin-right:18px;font-size:15px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:12px}
figure{margin:0}svg.chart{width:100%;height:auto;font-size:11px;background:#fafbfc;border:1px solid #e4e7eb;border-radius:4px}
svg .grid{stroke:#e6e8eb}svg .title{font-size:13px;font-weight:600}svg .axis{fill:#5a6470}
.legend{font-size:12px;color:#5a6470;display:flex;flex-wrap:wrap;gap:4px 14px;margin-top:4px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
`;

const ms = (v: number | undefined): string => (v === undefined ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const verdict = (ok: boolean, yes: string, no: string): string => `<span class="${ok ? 'ok' : 'bad'}">${h(ok ? yes : no)}</span>`;

function table(head: string[], rows: string[][], numeric: Set<number>): string {
  const th = head.map((x, i) => `<th${numeric.has(i) ? ' class="n"' : ''}>${h(x)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c, i) => `<td${numeric.has(i) ? ' class="n"' : ''}>${c}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

function callsTable(calls: CallStats[], perReplica: boolean): string {
  const head = [
    ...(perReplica ? ['replica'] : []),
    'verb',
    'resource',
    'calls',
    'per s',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'SLO (p99)',
    'errors',
  ];
  const rows = calls.map((c) => [
    ...(perReplica ? [h(c.replica || '(no header)')] : []),
    h(c.verb),
    h(c.resource),
    String(c.count),
    c.perSecond.toFixed(1),
    ms(c.p50Ms),
    ms(c.p90Ms),
    ms(c.p99Ms),
    c.sloSeconds === undefined
      ? '<span class="muted">none</span>'
      : verdict(c.sloMet !== false, `≤ ${c.sloSeconds} s met`, `> ${c.sloSeconds} s`),
    c.errors === 0
      ? '0'
      : `<span class="bad">${c.errors}</span> ${h(
          Object.entries(c.errorsByCode)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', '),
        )}`,
  ]);
  const first = perReplica ? 1 : 0;
  return table(head, rows, new Set([first + 2, first + 3, first + 4, first + 5, first + 6]));
}

/** per verb: calls summed over resources, p99 the worst resource's (an upper bound) — a
 *  line per verb and resource would be too many to tell apart */
function byVerb(values: Record<string, number>, combine: (a: number, b: number) => number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [call, v] of Object.entries(values)) {
    const verb = call.slice(0, call.indexOf(' '));
    out[verb] = out[verb] === undefined ? v : combine(out[verb]!, v);
  }
  return out;
}

function seriesOf(timeline: TimePoint[], pick: (t: TimePoint) => Record<string, number>): ChartSeries[] {
  const names = [...new Set(timeline.flatMap((t) => Object.keys(pick(t))))].sort();
  return names.map((name) => ({ name, points: timeline.map((t) => [t.second, pick(t)[name] ?? 0] as [number, number]) }));
}

export function renderHtmlReport(r: LoadResult): string {
  const timeline = r.timeline;
  const charts = [
    lineChart(
      'Throughput per verb',
      'seconds into the run',
      'calls / s',
      seriesOf(timeline, (t) => byVerb(t.calls, (a, b) => a + b)),
    ),
    lineChart(
      'p99 latency per verb (its slowest resource)',
      'seconds into the run',
      'ms',
      seriesOf(timeline, (t) => byVerb(t.p99Ms, Math.max)).map((s) => ({ ...s, points: s.points.filter((p) => p[1] > 0) })),
    ),
  ];
  if (r.replicas.toldApart) {
    charts.push(
      lineChart(
        'Throughput per replica',
        'seconds into the run',
        'calls / s',
        seriesOf(timeline, (t) => Object.fromEntries(Object.entries(t.byReplica).map(([k, v]) => [k || '(no header)', v]))),
      ),
    );
  }
  charts.push(
    lineChart('Errors', 'seconds into the run', 'errors / s', [{ name: 'errors', points: timeline.map((t) => [t.second, t.errors]) }]),
  );
  const params = Object.entries(r.parameters)
    .map(([k, v]) => `${h(k)}=${h(String(v))}`)
    .join(', ');
  const delivery = Object.entries(r.delivery).map(([group, d]) => [
    h(group),
    String(d.watchers),
    String(d.expectedPerWatcher),
    String(d.delivered),
    d.missing === 0 ? '0' : `<span class="bad">${d.missing}</span>`,
    d.duplicated === 0 ? '0' : `<span class="bad">${d.duplicated}</span>`,
    d.outOfOrder === 0 ? '0' : `<span class="bad">${d.outOfOrder}</span>`,
    `${d.reconnects} / ${d.relists}`,
    ms(d.lagP50Ms),
    ms(d.lagP99Ms),
    ms(d.lagMaxMs),
  ]);
  const leases = r.replicas.identityLeases.map((l) => [
    h(l.name),
    h(l.holderIdentity),
    h(l.renewTime),
    r.replicas.answeredBy.includes(l.name) ? '<span class="ok">answered</span>' : '<span class="muted">-</span>',
  ]);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kapi load: ${h(r.scenario)} ${h(r.startedAt)}</title><link rel="icon" href="data:,"><style>${STYLE}</style></head>
<body>
<h1>kapi load: ${h(r.scenario)}</h1>
<p class="muted">${h(r.server)} · started ${h(r.startedAt)} · ${r.wallSeconds.toFixed(1)} s · ${r.totals.calls} calls, ${r.totals.errors} errors · ${params}</p>
<p class="verdicts">${verdict(r.complete, 'counts add up, watch delivery complete', 'counts or watch delivery incomplete')}${verdict(r.sloMet, 'API call SLOs met', 'API call SLOs missed')}</p>
<h2>Over time</h2><div class="charts">${charts.join('')}</div>
<h2>Calls</h2>${callsTable(r.calls, false)}
${r.replicas.toldApart ? `<h2>Calls per replica</h2>${callsTable(r.callsPerReplica, true)}` : '<p class="muted">Replicas could not be told apart: start kapi with --replica-response-header to see every replica\'s share.</p>'}
${delivery.length ? `<h2>Watch delivery</h2>${table(['watchers', 'count', 'expected each', 'delivered', 'missing', 'duplicated', 'out of order', 'reconnects / relists', 'lag p50 ms', 'lag p99 ms', 'lag max ms'], delivery, new Set([1, 2, 3, 4, 5, 6, 8, 9, 10]))}` : ''}
<h2>Checks</h2>${table(
    ['check', 'expected', 'actual', ''],
    r.checks.map((c) => [h(c.name), String(c.expected), String(c.actual), verdict(c.ok, 'ok', 'failed')]),
    new Set([1, 2]),
  )}
<h2>Replicas (identity Leases at the start)</h2>${leases.length ? table(['lease', 'holder', 'renewed', ''], leases, new Set()) : '<p class="muted">none found (not a kube-apiserver with APIServerIdentity, or no permission to list Leases)</p>'}
</body></html>
`;
}
