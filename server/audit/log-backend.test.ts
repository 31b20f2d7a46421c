import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { backupName, backupTime, createLogBackend } from './log-backend.js';

const quiet = { warn: () => undefined, error: () => undefined };

function event(i: number, pad = 0): Record<string, unknown> {
  return { kind: 'Event', apiVersion: 'audit.k8s.io/v1', auditID: `id-${i}`, requestURI: `/x?a=1&b=<${i}>`, pad: 'p'.repeat(pad) };
}

test("backup names are lumberjack's, in UTC, and parse back", () => {
  const at = new Date('2026-11-22T04:05:06.789Z');
  assert.equal(backupName('/var/log/audit.log', at), '/var/log/audit-2026-11-22T04-05-06.789.log');
  assert.equal(backupTime('/var/log/audit.log', 'audit-2026-11-22T04-05-06.789.log')?.getTime(), at.getTime());
  assert.equal(backupTime('/var/log/audit.log', 'audit-2026-11-22T04-05-06.789.log.gz')?.getTime(), at.getTime());
  assert.equal(backupTime('/var/log/audit.log', 'other-2026-11-22T04-05-06.789.log'), undefined);
  assert.equal(backupTime('/var/log/audit.log', 'audit.log'), undefined);
});

test('one JSON line per event, Go-escaped; appends to an existing file', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-audit-log-'));
  try {
    const file = path.join(dir, 'sub', 'audit.log');
    const backend = createLogBackend({ path: file, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, compress: false, logger: quiet });
    backend.processEvents([event(1), event(2)]);
    backend.processEvents([event(3)]);
    await backend.shutdown();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 3);
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { auditID: string }).auditID),
      ['id-1', 'id-2', 'id-3'],
    );
    assert.match(lines[0]!, /"requestURI":"\/x\?a=1\\u0026b=\\u003c1\\u003e"/);
    const again = createLogBackend({ path: file, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, compress: false, logger: quiet });
    again.processEvents([event(4)]);
    await again.shutdown();
    assert.equal(readFileSync(file, 'utf8').trimEnd().split('\n').length, 4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rotation past maxsize keeps maxbackup backups, compressed; maxage removes old ones', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-audit-log-'));
  try {
    const file = path.join(dir, 'audit.log');
    // an old backup that maxage removes at the first rotation
    writeFileSync(path.join(dir, 'audit-2020-01-01T00-00-00.000.log.gz'), '');
    let t = Date.parse('2026-11-22T00:00:00.000Z');
    const backend = createLogBackend({
      path: file,
      maxSizeMB: 1,
      maxBackups: 2,
      maxAgeDays: 30,
      compress: true,
      logger: quiet,
      now: () => new Date((t += 1000)),
    });
    // ~300 KiB events: four fit in 1 MiB, so 20 of them rotate several times
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      backend.processEvents([event(i, 300 * 1024)]);
      ids.push(`id-${i}`);
    }
    await backend.shutdown();
    const names = readdirSync(dir).sort();
    const backups = names.filter((n) => n !== 'audit.log');
    assert.equal(backups.length, 2, names.join(' '));
    assert.ok(
      backups.every((n) => n.endsWith('.log.gz')),
      names.join(' '),
    );
    assert.ok(!names.includes('audit-2020-01-01T00-00-00.000.log.gz'));
    const current = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.ok(current.length > 0 && current.length <= 4);
    // the newest backup holds the events just before the current file's, in order
    const newest = gunzipSync(readFileSync(path.join(dir, backups[1]!)))
      .toString('utf8')
      .trimEnd()
      .split('\n');
    const seen = [...newest, ...current].map((l) => (JSON.parse(l) as { auditID: string }).auditID);
    assert.deepEqual(seen, ids.slice(ids.length - seen.length));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a path that cannot be created fails at once', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-audit-log-'));
  try {
    writeFileSync(path.join(dir, 'file'), '');
    assert.throws(() =>
      createLogBackend({
        path: path.join(dir, 'file', 'audit.log'),
        maxSizeMB: 0,
        maxBackups: 0,
        maxAgeDays: 0,
        compress: false,
        logger: quiet,
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
