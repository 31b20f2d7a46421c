import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { writeClusterPki } from './certs.js';
import { certSans, isIssuedByAndFresh } from '../pki/x509.js';
import { setLogSink } from '../log.js';

const kapiBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/kapi');

interface KubeconfigDoc {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { user: { 'client-certificate-data': string } }[];
}

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-certs-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('writeClusterPki writes the CA, a serving certificate for the load balancer, SA keys and a kubeconfig for the load balancer', async (t) => {
  const restore = setLogSink(() => {});
  t.after(() => setLogSink(restore));
  const dir = path.join(tempDir(t), 'pki');
  const r = await writeClusterPki({ dir, serverNames: ['lb.example.com'], sans: ['10.1.2.3,replica-1'], lbURL: 'https://127.0.0.1:7443' });
  for (const f of [
    'ca.crt',
    'ca.key',
    'apiserver.crt',
    'apiserver.key',
    'admin.crt',
    'admin.key',
    'sa.key',
    'sa.pub',
    'admin.kubeconfig',
  ]) {
    assert.ok(statSync(path.join(dir, f)).isFile(), f);
  }
  const serving = readFileSync(path.join(dir, 'apiserver.crt'), 'utf8');
  const sans = certSans(serving);
  for (const name of ['lb.example.com', '10.1.2.3', 'replica-1', '127.0.0.1', 'localhost', 'kubernetes.default.svc', '10.96.0.1']) {
    assert.ok(sans.includes(name), `${name} in ${sans.join(',')}`);
  }
  const ca = readFileSync(path.join(dir, 'ca.crt'), 'utf8');
  assert.ok(isIssuedByAndFresh(serving, ca, 0));
  assert.equal(r.kubeconfig, path.join(dir, 'admin.kubeconfig'));
  assert.equal(statSync(r.kubeconfig).mode & 0o077, 0, 'the kubeconfig holds a key: not readable by others');
  const kc = parse(readFileSync(r.kubeconfig, 'utf8')) as KubeconfigDoc;
  assert.equal(kc.clusters[0]!.cluster.server, 'https://127.0.0.1:7443');
  assert.equal(Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString(), ca);
  assert.equal(
    Buffer.from(kc.users[0]!.user['client-certificate-data'], 'base64').toString(),
    readFileSync(path.join(dir, 'admin.crt'), 'utf8'),
  );
});

test('writeClusterPki is idempotent: a second run keeps the CA and the certificates', async (t) => {
  const restore = setLogSink(() => {});
  t.after(() => setLogSink(restore));
  const dir = tempDir(t);
  await writeClusterPki({ dir, serverNames: ['lb'] });
  const before = ['ca.crt', 'apiserver.crt', 'admin.crt', 'sa.key'].map((f) => readFileSync(path.join(dir, f), 'utf8'));
  const r = await writeClusterPki({ dir, serverNames: ['lb'] });
  const after = ['ca.crt', 'apiserver.crt', 'admin.crt', 'sa.key'].map((f) => readFileSync(path.join(dir, f), 'utf8'));
  assert.deepEqual(after, before);
  assert.equal(r.lbURL, 'https://lb:6443');
  // asking for another name re-issues the serving certificate from the same CA, keeping the old names
  await writeClusterPki({ dir, serverNames: ['lb', 'lb2.example'] });
  const sans = certSans(readFileSync(path.join(dir, 'apiserver.crt'), 'utf8'));
  assert.ok(sans.includes('lb') && sans.includes('lb2.example'), sans.join(','));
  assert.equal(readFileSync(path.join(dir, 'ca.crt'), 'utf8'), before[0]);
});

test('bin/kapi certs: writes the directory, exits 0; missing --dir exits 1; --help lists its flags', (t) => {
  const dir = path.join(tempDir(t), 'out');
  const ok = spawnSync(
    process.execPath,
    [kapiBin, 'certs', '--dir', dir, '--server-name', 'kapi-lb', '--lb-url', 'https://127.0.0.1:16443'],
    { encoding: 'utf8' },
  );
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /admin kubeconfig .*admin\.kubeconfig \(server https:\/\/127\.0\.0\.1:16443\)/);
  assert.ok(certSans(readFileSync(path.join(dir, 'apiserver.crt'), 'utf8')).includes('kapi-lb'));

  const missing = spawnSync(process.execPath, [kapiBin, 'certs', '--server-name', 'x'], { encoding: 'utf8' });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /--dir is required/);

  const badURL = spawnSync(process.execPath, [kapiBin, 'certs', '--dir', dir, '--lb-url', 'http://x:1'], { encoding: 'utf8' });
  assert.equal(badURL.status, 1);
  assert.match(badURL.stderr, /--lb-url/);

  const help = spawnSync(process.execPath, [kapiBin, 'certs', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--server-name stringArray/);
  assert.match(help.stdout, /--lb-url string/);

  const serverHelp = spawnSync(process.execPath, [kapiBin, '--help'], { encoding: 'utf8' });
  assert.equal(serverHelp.status, 0);
  assert.match(serverHelp.stdout, /kapi certs\s+write a shared PKI/);
});
