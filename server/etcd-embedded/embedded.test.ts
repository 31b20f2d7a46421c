import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isOurEtcd, pidFilePath, startEmbeddedEtcd, stopStaleEtcd } from './embedded.js';
import { setLogSink } from '../log.js';

setLogSink(() => {});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

/** writes k=v through etcd's JSON gateway */
async function putK(endpoint: string): Promise<void> {
  await fetch(`${endpoint}/v3/kv/put`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('k').toString('base64'), value: Buffer.from('v').toString('base64') }),
  });
}

/** the value of k through etcd's JSON gateway ('' when absent) */
async function readK(endpoint: string): Promise<string> {
  const res = await fetch(`${endpoint}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('k').toString('base64') }),
  });
  const body = (await res.json()) as { kvs?: { value: string }[] };
  return Buffer.from(body.kvs?.[0]?.value ?? '', 'base64').toString();
}

function tmpDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-embedded-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function health(endpoint: string): Promise<unknown> {
  const res = await fetch(`${endpoint}/health`);
  return res.json();
}

test('starts etcd on loopback with its data under <data-dir>/etcd, and stops it by PID', async (t) => {
  const dir = tmpDir(t);
  const etcd = await startEmbeddedEtcd({ dataDir: dir });
  t.after(() => etcd.stop());
  assert.match(etcd.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.deepEqual(await health(etcd.endpoint), { health: 'true' });
  assert.equal(etcd.etcdDataDir, path.join(dir, 'etcd'));
  assert.ok(existsSync(path.join(dir, 'etcd', 'member')));
  assert.equal(readFileSync(pidFilePath(dir), 'utf8').trim(), String(etcd.pid));
  assert.ok(isOurEtcd(etcd.pid, path.join(dir, 'etcd')));
  await etcd.stop();
  assert.ok(await gone(etcd.pid), 'etcd still running after stop()');
  assert.ok(!existsSync(pidFilePath(dir)), 'pid file left behind');
});

test('a restart on the same data dir reuses the member and its ports when free', async (t) => {
  const dir = tmpDir(t);
  const first = await startEmbeddedEtcd({ dataDir: dir });
  await putK(first.endpoint);
  await first.stop();
  const second = await startEmbeddedEtcd({ dataDir: dir });
  t.after(() => second.stop());
  assert.equal(second.endpoint, first.endpoint);
  assert.equal(await readK(second.endpoint), 'v');
});

test("a restart leaves the ports to avoid (the replica's own secure port) even when they were its own", async (t) => {
  const dir = tmpDir(t);
  const first = await startEmbeddedEtcd({ dataDir: dir });
  await putK(first.endpoint);
  await first.stop();
  const firstPort = Number(new URL(first.endpoint).port);
  const second = await startEmbeddedEtcd({ dataDir: dir, avoidPorts: [firstPort] });
  t.after(() => second.stop());
  assert.notEqual(Number(new URL(second.endpoint).port), firstPort);
  assert.equal(await readK(second.endpoint), 'v');
});

test('an etcd left by an earlier kapi (pid file) is stopped before a new one starts', async (t) => {
  const dir = tmpDir(t);
  const first = await startEmbeddedEtcd({ dataDir: dir });
  // simulate a SIGKILLed kapi: the member and the pid file stay, nobody calls stop()
  const stalePid = first.pid;
  const second = await startEmbeddedEtcd({ dataDir: dir });
  t.after(() => second.stop());
  assert.ok(await gone(stalePid), 'the stale etcd is still running');
  assert.notEqual(second.pid, stalePid);
  assert.deepEqual(await health(second.endpoint), { health: 'true' });
});

test('a pid file naming a process that is not our etcd leaves that process alone', async (t) => {
  const dir = tmpDir(t);
  const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => {
    if (sleeper.pid && alive(sleeper.pid)) process.kill(sleeper.pid, 'SIGKILL');
  });
  writeFileSync(pidFilePath(dir), `${sleeper.pid}\n`);
  assert.equal(await stopStaleEtcd(dir), false);
  assert.ok(alive(sleeper.pid!), 'an unrelated process was killed');
  assert.ok(!existsSync(pidFilePath(dir)));
});

test('when kapi dies by SIGKILL, the watchdog stops its etcd', async (t) => {
  const dir = tmpDir(t);
  const moduleUrl = new URL('./embedded.js', import.meta.url).href;
  const script = `
    const m = await import(${JSON.stringify(moduleUrl)});
    const e = await m.startEmbeddedEtcd({ dataDir: ${JSON.stringify(dir)} });
    process.stdout.write(e.pid + '\\n');
    setInterval(() => {}, 1000);
  `;
  const kapi = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: path.dirname(fileURLToPath(import.meta.url)),
  });
  const etcdPid = await new Promise<number>((resolve, reject) => {
    let out = '';
    kapi.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(Number.parseInt(out, 10));
    });
    kapi.once('exit', () => reject(new Error('the child exited before etcd started')));
  });
  t.after(() => {
    if (alive(etcdPid)) process.kill(etcdPid, 'SIGKILL');
  });
  assert.ok(alive(etcdPid));
  process.kill(kapi.pid!, 'SIGKILL');
  assert.ok(await gone(etcdPid), 'etcd outlived a SIGKILLed kapi');
});
