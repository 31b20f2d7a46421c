// The /status page: one self-contained document (no external assets, no framework) that
// polls /status?format=json every two seconds and redraws in place. Every text from the
// server goes in through textContent, never as markup: Lease names and labels are written by
// API clients.

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
header{background:#1d3557;color:#fff;padding:10px 18px;display:flex;gap:18px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:18px;margin:0}
#state{font-size:13px;opacity:.9}
#state.failed{color:#ffb4b4}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:14px;padding:14px}
section.wide{grid-column:1/-1}
section{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:10px 14px;overflow:auto}
h2{font-size:15px;margin:2px 0 8px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eef0f2;white-space:nowrap}
th{color:#5a6470;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.up{color:#1a7f37;font-weight:600}.down{color:#c62828;font-weight:600}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;font-size:13px}
.kv span:nth-child(odd){color:#5a6470}
canvas{width:100%;height:160px;display:block}
.legend{font-size:12px;color:#5a6470;display:flex;gap:12px;flex-wrap:wrap}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
`;

const SCRIPT = `
'use strict';
const POLL_MS = 2000, KEEP = 150;
const COLORS = ['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#17becf','#8c564b','#e377c2'];
const series = new Map();
const colorOf = new Map();
const $ = (id) => document.getElementById(id);
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; }
function fill(tbody, rows) { tbody.replaceChildren(...rows); }
function row(cells, attrs) {
  const tr = document.createElement('tr');
  for (const c of cells) { const td = el('td', c.text === undefined ? c : c.text, c.cls); tr.appendChild(td); }
  for (const [k, v] of Object.entries(attrs || {})) tr.setAttribute(k, v);
  return tr;
}
const num = (v) => ({ text: v === undefined || v === null ? '-' : typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en') : v.toFixed(1)) : v, cls: 'num' });
const bytes = (v) => v === undefined ? '-' : v >= 1048576 ? (v / 1048576).toFixed(1) + ' MiB' : (v / 1024).toFixed(0) + ' KiB';
function kv(box, pairs) { box.replaceChildren(...pairs.flatMap(([k, v]) => [el('span', k), el('span', v)])); }
function colorFor(name) { if (!colorOf.has(name)) colorOf.set(name, COLORS[colorOf.size % COLORS.length]); return colorOf.get(name); }

function render(s) {
  $('answered').textContent = 'answered by ' + s.replica.leaseName + ' (' + s.replica.version + ') at ' + new Date(s.time).toLocaleTimeString();
  fill($('replicas').tBodies[0], s.replicas.map((r) => row([
    r.leaseName + (r.self ? ' (this one)' : ''), r.hostname, { text: r.up ? 'up' : 'down', cls: r.up ? 'up' : 'down' },
    r.version || '-', r.renewTime ? new Date(r.renewTime).toLocaleTimeString() : '-', r.holderIdentity,
  ], { 'data-lease': r.leaseName, 'data-up': String(r.up) })));
  const q = s.requests;
  kv($('requests'), [['in flight (read-only / mutating)', q.inFlight.readOnly + ' / ' + q.inFlight.mutating], ['long-running (watches)', q.longRunning],
    ['requests since start', q.total.toLocaleString('en')], ['requests per second', q.perSecond === undefined ? '(next look)' : q.perSecond.toFixed(1)]]);
  const w = s.watchCache;
  kv($('cache-summary'), w.enabled ? [['cache revision', w.revision], ['lag behind etcd (revisions)', w.lagRevisions === undefined ? '-' : w.lagRevisions]] : [['watch cache', 'off (--watch-cache=false)']]);
  fill($('cache').tBodies[0], w.resources.filter((r) => r.objects > 0 || r.watchers > 0).map((r) => row([r.resource, num(r.objects), num(r.watchers), num(r.bookmarksSent), num(r.historyStartRevision)])));
  const pf = s.priorityAndFairness;
  $('apf-off').hidden = pf.enabled;
  fill($('apf').tBodies[0], pf.levels.map((l) => row([l.name + (l.draining ? ' (draining)' : ''), l.exempt ? 'exempt' : num(l.concurrencyLimit), num(l.executing), num(l.waiting),
    l.queueLengths ? l.queueLengths.length + ' queues' + (l.waiting ? ': ' + l.queueLengths.filter((n) => n > 0).join(',') : '') : '-'])));
  const e = s.etcd;
  kv($('etcd-summary'), [['leader', e.leader || '-'], ['revision', e.revision === undefined ? '-' : e.revision], ['compacted to', e.compactedRevision === undefined ? '-' : e.compactedRevision || 'not yet']].concat(e.error ? [['error', e.error]] : []));
  fill($('etcd').tBodies[0], e.members.map((m) => row([m.name + (m.leader ? ' (leader)' : ''), { text: m.healthy ? 'healthy' : 'unhealthy', cls: m.healthy ? 'up' : 'down' },
    num(m.revision), bytes(m.dbSizeBytes), m.version || '-', m.error || m.clientURLs.join(',')])));
  const name = s.replica.leaseName;
  if (!series.has(name)) series.set(name, []);
  const points = series.get(name);
  points.push({ t: Date.parse(s.time), rps: q.perSecond, inflight: q.inFlight.readOnly + q.inFlight.mutating });
  if (points.length > KEEP) points.shift();
  draw($('rate'), 'rps'); draw($('inflight'), 'inflight');
  $('legend').replaceChildren(...[...series.keys()].map((n) => { const s2 = el('span', n); const i = el('i'); i.style.background = colorFor(n); s2.prepend(i); return s2; }));
}

function draw(canvas, field) {
  const ratio = window.devicePixelRatio || 1, w = canvas.clientWidth, h = canvas.clientHeight;
  canvas.width = w * ratio; canvas.height = h * ratio;
  const g = canvas.getContext('2d'); g.scale(ratio, ratio); g.clearRect(0, 0, w, h);
  const all = [...series.values()].flat().filter((p) => typeof p[field] === 'number');
  if (all.length === 0) { g.fillStyle = '#888'; g.fillText('waiting for data', 8, 16); return; }
  const t1 = Math.max(...all.map((p) => p.t)), t0 = t1 - KEEP * POLL_MS;
  const max = Math.max(1, ...all.map((p) => p[field])) * 1.1;
  const left = 44, bottom = h - 16;
  g.strokeStyle = '#ddd'; g.fillStyle = '#666'; g.font = '11px system-ui';
  for (let k = 0; k <= 4; k++) { const y = bottom - (bottom - 6) * k / 4; g.beginPath(); g.moveTo(left, y); g.lineTo(w, y); g.stroke(); g.fillText((max * k / 4).toFixed(max < 10 ? 1 : 0), 2, y + 4); }
  g.fillText('-' + Math.round(KEEP * POLL_MS / 60000) + ' min', left, h - 2); g.fillText('now', w - 24, h - 2);
  for (const [n, pts] of series) {
    g.strokeStyle = colorFor(n); g.lineWidth = 1.5; g.beginPath(); let started = false;
    for (const p of pts) {
      if (typeof p[field] !== 'number' || p.t < t0) continue;
      const x = left + (w - left) * (p.t - t0) / (t1 - t0 || 1), y = bottom - (bottom - 6) * p[field] / max;
      if (started) g.lineTo(x, y); else { g.moveTo(x, y); started = true; }
    }
    g.stroke();
  }
}

async function poll() {
  try {
    const res = await fetch(location.pathname.replace(/\\/+$/, '') + '?format=json', { cache: 'no-store', headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error('HTTP ' + res.status);
    render(await res.json());
    $('state').textContent = 'live, every ' + POLL_MS / 1000 + ' s'; $('state').className = '';
  } catch (err) {
    $('state').textContent = 'last look failed (' + err.message + '), retrying'; $('state').className = 'failed';
  } finally {
    setTimeout(poll, POLL_MS);
  }
}
poll();
`;

export const STATUS_PAGE_HTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kapi status</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<style>${STYLE}</style></head>
<body>
<header><h1>kapi status</h1><span id="answered"></span><span id="state">loading</span></header>
<main>
<section class="wide"><h2>Replicas (identity Leases)</h2><table id="replicas"><thead><tr><th>lease</th><th>host</th><th>state</th><th>version</th><th>renewed</th><th>holder</th></tr></thead><tbody></tbody></table></section>
<section><h2>Requests (this replica)</h2><div class="kv" id="requests"></div>
<div class="legend" id="legend"></div><h2>requests / s</h2><canvas id="rate"></canvas><h2>in flight</h2><canvas id="inflight"></canvas></section>
<section><h2>Watch cache (this replica)</h2><div class="kv" id="cache-summary"></div>
<table id="cache"><thead><tr><th>resource</th><th class="num">objects</th><th class="num">watchers</th><th class="num">bookmarks sent</th><th class="num">history from</th></tr></thead><tbody></tbody></table></section>
<section><h2>Priority and fairness (this replica)</h2><p id="apf-off" hidden>off (--enable-priority-and-fairness=false)</p>
<table id="apf"><thead><tr><th>priority level</th><th class="num">seats</th><th class="num">executing</th><th class="num">waiting</th><th>queues</th></tr></thead><tbody></tbody></table></section>
<section><h2>etcd</h2><div class="kv" id="etcd-summary"></div>
<table id="etcd"><thead><tr><th>member</th><th>health</th><th class="num">revision</th><th class="num">db size</th><th>version</th><th>endpoint</th></tr></thead><tbody></tbody></table></section>
</main>
<script>${SCRIPT}</script>
</body></html>
`;
