// Audit log rotation of a kapi process: --audit-log-maxsize=1 (MB), --audit-log-maxbackup=3,
// --audit-log-maxage=1 (day), --audit-log-compress. kubectl creates ConfigMaps of ~300 KB
// logged at RequestResponse, so every event after the first fills a file past 1 MB and
// rotates it. Backups are gzipped under lumberjack's names; one from 2020 goes by age while
// the count is still within maxbackup; later only the three newest stay; a file that is not a
// backup of the log is left alone. Every event is in exactly one file, in order.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { kubectlOk, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';

const MB = 1024 * 1024;
const OLD_BACKUP = 'audit-2020-01-01T00-00-00.000.log.gz';
const NOT_A_BACKUP = 'notes-2020-01-01T00-00-00.000.log';

describe('audit log rotation: --audit-log-maxsize, -maxbackup, -maxage, -compress', () => {
  let dir: string;
  let kapi: KapiProcess;
  const ns = uniqueName('audit-rot');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });

  /** the ConfigMap names of the create events in one log file's text, in order */
  const createdIn = (text: string): string[] =>
    text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { verb: string; objectRef?: { namespace?: string; name?: string; resource?: string } })
      .filter((e) => e.verb === 'create' && e.objectRef?.resource === 'configmaps' && e.objectRef.namespace === ns)
      .map((e) => e.objectRef!.name ?? '');

  /** backups of audit.log, oldest first (their names sort by time), and what each holds */
  function backups(): { name: string; created: string[]; size: number }[] {
    return readdirSync(dir)
      .filter((n) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log(\.gz)?$/.test(n))
      .sort()
      .map((name) => {
        const raw = readFileSync(path.join(dir, name));
        let text: string;
        try {
          text = name.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
        } catch {
          // a backup still being compressed
          return { name: `${name} (being written)`, created: [], size: raw.length };
        }
        return { name, created: name === OLD_BACKUP ? ['(2020)'] : createdIn(text), size: Buffer.byteLength(text) };
      });
  }
  const current = (): string[] => createdIn(readFileSync(path.join(dir, 'audit.log'), 'utf8'));

  async function createConfigMaps(names: string[]): Promise<void> {
    const blob = path.join(dir, 'blob.txt');
    writeFileSync(blob, 'x'.repeat(300 * 1024));
    for (const name of names) await kubectlOk(['create', 'configmap', name, '-n', ns, `--from-file=blob=${blob}`], admin());
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-audit-rot-'));
    const policy = path.join(dir, 'policy.yaml');
    writeFileSync(
      policy,
      `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  verbs: [create]
  resources: [{ group: "", resources: [configmaps] }]
- level: None
`,
    );
    writeFileSync(path.join(dir, OLD_BACKUP), gzipSync('{}\n'));
    writeFileSync(path.join(dir, NOT_A_BACKUP), 'kept\n');
    kapi = await startKapi({
      extraArgs: [
        '--audit-policy-file',
        policy,
        '--audit-log-path',
        path.join(dir, 'audit.log'),
        '--audit-log-maxsize',
        '1',
        '--audit-log-maxbackup',
        '3',
        '--audit-log-maxage',
        '1',
        '--audit-log-compress',
      ],
    });
    await kubectlOk(['create', 'namespace', ns], admin());
  });
  after(async () => {
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('rotates past 1 MB into gzipped backups and removes a backup older than a day', async () => {
    await createConfigMaps(['cm-1', 'cm-2', 'cm-3']);
    // a backup is compressed after its rotation: until then it is there as plain .log
    const state = await waitFor('two rotations, both compressed, the 2020 backup gone', () => {
      const b = backups();
      const names = b.map((x) => x.name);
      const compressed = names.every((n) => n.endsWith('.log.gz'));
      return names.length === 2 && compressed && !names.includes(OLD_BACKUP) && current().includes('cm-3') ? b : undefined;
    });
    assert.deepEqual(
      state.map((b) => b.created),
      [['cm-1'], ['cm-2']],
    );
    for (const b of state) {
      assert.match(b.name, /\.log\.gz$/);
      assert.ok(b.size <= MB, `${b.name} holds ${b.size} bytes`);
    }
    assert.deepEqual(current(), ['cm-3']);
    assert.equal(readFileSync(path.join(dir, NOT_A_BACKUP), 'utf8'), 'kept\n');
  });

  it('keeps only the --audit-log-maxbackup newest backups', async () => {
    await createConfigMaps(['cm-4', 'cm-5', 'cm-6', 'cm-7']);
    const state = await waitFor('three backups holding cm-4..cm-6', () => {
      const b = backups();
      return b.length === 3 && b[2]!.created.includes('cm-6') && b[0]!.created.includes('cm-4') && current().includes('cm-7')
        ? b
        : undefined;
    });
    assert.deepEqual(
      state.map((b) => b.created),
      [['cm-4'], ['cm-5'], ['cm-6']],
    );
    assert.deepEqual(current(), ['cm-7']);
    assert.ok(statSync(path.join(dir, 'audit.log')).size <= MB);
    assert.equal(readFileSync(path.join(dir, NOT_A_BACKUP), 'utf8'), 'kept\n');
  });
});
