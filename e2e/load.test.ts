// `kapi load` and /status against a local 3-replica cluster (replicas started with
// --replica-response-header): every scenario runs short and its counts must add up, with
// every watch event delivered once and in order, and every replica seen answering. The HTML
// report and the live status page (through `kubectl proxy`) are opened in headless chromium:
// no console errors, every replica shown, and the status page notices a stopped replica.
// Timings are never asserted: the machine is shared.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalCluster, type LocalCluster } from '../deploy/local-cluster.js';
import { chromiumAvailable, startChromium, type Browser } from './browser.js';
import { kubectlSpawn, repoRoot, type KubectlChild } from './harness.js';
import type { LoadResult } from '../server/load/result.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  result?: LoadResult;
  reportPath?: string;
}

describe('kapi load and /status on a 3-replica cluster', () => {
  let cluster: LocalCluster;
  let dir: string;
  let browser: Browser | undefined;
  let proxy: KubectlChild | undefined;
  const reports: string[] = [];

  /** `kapi load <args>` as a child process (stopped by PID if the test gives up on it) */
  async function load(args: string[], resultsDir: string): Promise<Run> {
    const child = spawn(
      process.execPath,
      [path.join(repoRoot, 'dist/server/main.js'), 'load', ...args, '--kubeconfig', cluster.kubeconfig, '--results-dir', resultsDir],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), 240_000);
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    clearTimeout(timer);
    const runDirs = readdirSync(resultsDir, { withFileTypes: true }).filter((d) => d.isDirectory());
    if (runDirs.length !== 1) return { code, stdout, stderr };
    const runDir = path.join(resultsDir, runDirs[0]!.name);
    return {
      code,
      stdout,
      stderr,
      result: JSON.parse(readFileSync(path.join(runDir, 'result.json'), 'utf8')) as LoadResult,
      reportPath: path.join(runDir, 'report.html'),
    };
  }

  async function scenario(name: string, args: string[]): Promise<LoadResult> {
    const resultsDir = mkdtempSync(path.join(dir, `${name}-`));
    const run = await load([name, ...args, '--settle', '30s'], resultsDir);
    assert.ok(run.result, `no result.json:\n${run.stdout}\n${run.stderr}`);
    const r = run.result;
    assert.equal(run.code, 0, `kapi load ${name} failed:\n${run.stdout}\n${run.stderr}`);
    assert.equal(r.scenario, name);
    for (const c of r.checks) assert.ok(c.ok, `${c.name}: expected ${c.expected}, got ${c.actual}`);
    for (const [group, d] of Object.entries(r.delivery)) {
      assert.equal(d.missing, 0, `${group}: missing events`);
      assert.equal(d.duplicated, 0, `${group}: duplicated events`);
      assert.equal(d.outOfOrder, 0, `${group}: events out of order`);
    }
    assert.equal(r.complete, true);
    // the totals are the sum of the per-call rows, and of the per-replica rows
    const sum = (rows: { count: number; errors: number }[]): number => rows.reduce((n, c) => n + c.count + c.errors, 0);
    assert.equal(sum(r.calls), r.totals.calls);
    assert.equal(sum(r.callsPerReplica), r.totals.calls);
    assert.equal(r.replicas.toldApart, true);
    const leases = new Set(r.replicas.identityLeases.map((l) => l.name));
    assert.equal(leases.size, 3, 'three identity Leases');
    for (const replica of r.replicas.answeredBy) assert.ok(leases.has(replica), `${replica} is an identity Lease`);
    assert.ok(run.reportPath);
    reports.push(run.reportPath);
    return r;
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-load-'));
    cluster = await startLocalCluster({ dir: path.join(dir, 'cluster'), kapiArgs: ['--replica-response-header'] });
  });
  after(async () => {
    // each is stopped whatever happened to the one before: a cluster left running would keep
    // this file's process alive until the runner's timeout
    const stops = await Promise.allSettled([proxy?.stop(), browser?.stop()]);
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    for (const s of stops) if (s.status === 'rejected') throw s.reason;
  });

  it('density: every Pod reaches its node watcher and every informer once', async () => {
    const r = await scenario('density', ['--pods', '120', '--namespaces', '3', '--nodes', '4', '--informers', '2', '--rate', '60']);
    assert.equal(r.delivery['cluster-wide informers']!.delivered, 2 * 120);
    assert.equal(r.delivery['node watchers']!.delivered, 120);
    assert.equal(r.calls.find((c) => c.verb === 'create' && c.resource === 'pods')!.count, 120);
    assert.equal(r.replicas.answeredBy.length, 3, 'the load balancer spread the calls over every replica');
  });

  it('churn: objects created, updated and deleted, none left', async () => {
    const r = await scenario('churn', ['--objects', '40', '--rate', '60', '--size', '2048']);
    for (const verb of ['create', 'update', 'delete']) {
      const n = r.calls
        .filter((c) => c.verb === verb && (c.resource === 'configmaps' || c.resource === 'secrets'))
        .reduce((k, c) => k + c.count, 0);
      assert.equal(n, 40, verb);
    }
  });

  it('list: JSON and protobuf, full and paged, consistent and rv=0 lists return every object', async () => {
    const r = await scenario('list', ['--objects', '150', '--repeats', '1', '--page-size', '40', '--size', '256']);
    assert.equal(r.calls.filter((c) => c.resource.startsWith('configmaps (')).length, 8);
  });

  it('watch: every patch reaches every watcher once, in order', async () => {
    const r = await scenario('watch', ['--watchers', '6', '--updates', '80', '--rate', '40']);
    assert.equal(r.delivery.watchers!.delivered, 6 * 80);
  });

  it('mixed: the parts run together and each adds up', async () => {
    const r = await scenario('mixed', [
      '--duration',
      '8s',
      '--rate',
      '40',
      '--namespaces',
      '2',
      '--nodes',
      '2',
      '--informers',
      '1',
      '--watchers',
      '2',
      '--objects',
      '60',
    ]);
    assert.deepEqual(r.parts?.map((p) => p.scenario).sort(), ['churn', 'density', 'list', 'watch']);
  });

  it('refuses a target that is not loopback unless told', async () => {
    const resultsDir = mkdtempSync(path.join(dir, 'refused-'));
    const run = await load(['churn', '--server', 'https://192.0.2.1:6443'], resultsDir);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--allow-non-loopback/);
  });

  it('the HTML report opens in chromium without errors, with plots and every replica', {
    skip: !chromiumAvailable() && 'chromium is not installed',
  }, async () => {
    browser ??= await startChromium();
    const report = reports.find((p) => p.includes(`${path.sep}density-`));
    assert.ok(report, 'the density run wrote a report');
    await browser.page.navigate(`file://${report}`);
    assert.ok((await browser.page.evaluate<number>('document.querySelectorAll("svg.chart path").length')) >= 3, 'plots have lines');
    const text = await browser.page.evaluate<string>('document.body.innerText');
    const result = JSON.parse(readFileSync(path.join(path.dirname(report), 'result.json'), 'utf8')) as LoadResult;
    for (const replica of result.replicas.answeredBy) assert.ok(text.includes(replica), `report names ${replica}`);
    assert.match(text, /counts add up, watch delivery complete/);
    assert.deepEqual(browser.page.errors, []);
  });

  it('/status in chromium shows every replica, updates itself, and notices a stopped replica', {
    skip: !chromiumAvailable() && 'chromium is not installed',
  }, async () => {
    browser ??= await startChromium();
    proxy = kubectlSpawn(['proxy', '--port=0', '--address=127.0.0.1'], { kubeconfig: cluster.replicaKubeconfig(0) });
    const port = /Starting to serve on 127\.0\.0\.1:(\d+)/.exec(await proxy.waitForOutput(/Starting to serve on 127\.0\.0\.1:\d+/))![1];
    const page = browser.page;
    await page.navigate(`http://127.0.0.1:${port}/status`);
    const rows = 'document.querySelectorAll("#replicas tbody tr")';
    await page.waitFor(`${rows}.length === 3 && [...${rows}].every((r) => r.dataset.up === "true")`, 30_000);
    // it refreshes in place: the answer's time moves on without a reload
    const first = await page.evaluate<string>('document.getElementById("answered").textContent');
    await page.waitFor(`document.getElementById("answered").textContent !== ${JSON.stringify(first)}`, 15_000);
    assert.equal(await page.evaluate<number>('performance.getEntriesByType("navigation").length'), 1);
    await page.waitFor('document.querySelectorAll("#etcd tbody tr").length === 3', 10_000);
    await cluster.replicas[2]!.stop();
    await page.waitFor(`[...${rows}].filter((r) => r.dataset.up === "false").length === 1`, 60_000);
    assert.deepEqual(page.errors, []);
    await cluster.replicas[2]!.restart();
  });
});
