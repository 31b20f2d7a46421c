import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensurePki, requiredServingSans, type PkiOptions } from './pki.js';
import { certSans, createCA, generateKey, issueCert } from './x509.js';
import { setLogSink } from '../log.js';

setLogSink(() => {});

function tmpDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-pki-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function options(certDir: string, extra: Partial<PkiOptions> = {}): PkiOptions {
  return { certDir, tlsCertFile: '', tlsPrivateKeyFile: '', clientCaFile: '', kubernetesServiceIP: '10.96.0.1', ...extra };
}

test('creates CA, serving, admin and service-account files, with private keys readable by the owner only', async (t) => {
  const dir = tmpDir(t);
  const pki = await ensurePki(options(dir, { advertiseAddress: '192.0.2.10' }));
  for (const f of Object.values(pki.files)) assert.ok(statSync(f).isFile(), f);
  for (const f of [pki.files.caKey, pki.files.servingKey, pki.files.adminKey, pki.files.serviceAccountKey]) {
    assert.equal(statSync(f).mode & 0o077, 0, `${f} must not be group/world readable`);
  }
  const ca = new X509Certificate(pki.caCertPem);
  assert.equal(ca.ca, true);
  // ten years, give or take the back-dating
  assert.ok(new Date(ca.validTo).getTime() - Date.now() > 9.9 * 365 * 86_400_000);
  assert.equal(pki.clientCaPem, pki.caCertPem);
  assert.equal(pki.servingCaPem, pki.caCertPem);
});

test('the serving certificate covers loopback, the kubernetes Service names and IP, and the advertise address', async (t) => {
  const dir = tmpDir(t);
  const pki = await ensurePki(options(dir, { advertiseAddress: '192.0.2.10', extraSans: ['kapi.example.test'] }));
  const cert = new X509Certificate(pki.servingCertPem);
  const sans = certSans(pki.servingCertPem);
  for (const name of [
    '127.0.0.1',
    '::1',
    'localhost',
    '192.0.2.10',
    '10.96.0.1',
    'kapi.example.test',
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    'kubernetes.default.svc.cluster.local',
  ]) {
    assert.ok(sans.includes(name), `SAN ${name} missing from ${sans.join(',')}`);
  }
  assert.ok(cert.checkIssued(new X509Certificate(pki.caCertPem)));
  assert.ok(cert.verify(new X509Certificate(pki.caCertPem).publicKey));
  assert.ok(cert.checkHost('localhost'));
  assert.ok(cert.checkIP('127.0.0.1'));
  assert.ok(cert.checkPrivateKey(createPrivateKey(pki.servingKeyPem)));
  assert.match(cert.keyUsage?.join(',') ?? '', /1\.3\.6\.1\.5\.5\.7\.3\.1/); // serverAuth
});

test('the admin certificate is CN kubernetes-admin, O system:masters, for client auth', async (t) => {
  const pki = await ensurePki(options(tmpDir(t)));
  assert.ok(pki.admin);
  const cert = new X509Certificate(pki.admin.certPem);
  assert.match(cert.subject, /^CN=kubernetes-admin$/m);
  assert.match(cert.subject, /^O=system:masters$/m);
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']); // clientAuth
  assert.ok(cert.verify(new X509Certificate(pki.caCertPem).publicKey));
});

test('the service-account key pair is RSA and matches', async (t) => {
  const pki = await ensurePki(options(tmpDir(t)));
  const priv = createPrivateKey(pki.serviceAccountKeyPem);
  assert.equal(priv.asymmetricKeyType, 'rsa');
  assert.equal(
    createPublicKey(priv).export({ type: 'spki', format: 'pem' }),
    createPublicKey(pki.serviceAccountPublicKeyPem).export({ type: 'spki', format: 'pem' }),
  );
});

test('a second start reuses every file unchanged', async (t) => {
  const dir = tmpDir(t);
  const first = await ensurePki(options(dir));
  const before = Object.fromEntries(Object.values(first.files).map((f) => [f, readFileSync(f, 'utf8')]));
  const second = await ensurePki(options(dir));
  for (const [f, content] of Object.entries(before)) assert.equal(readFileSync(f, 'utf8'), content, `${f} changed`);
  assert.equal(second.servingCertPem, first.servingCertPem);
  assert.equal(second.admin?.certPem, first.admin?.certPem);
});

test('a new advertise address re-issues only the serving certificate, keeping the names it had', async (t) => {
  const dir = tmpDir(t);
  const first = await ensurePki(options(dir, { advertiseAddress: '192.0.2.10' }));
  const second = await ensurePki(options(dir, { advertiseAddress: '192.0.2.11' }));
  assert.notEqual(second.servingCertPem, first.servingCertPem);
  assert.equal(second.caCertPem, first.caCertPem);
  assert.equal(second.admin?.certPem, first.admin?.certPem);
  const sans = certSans(second.servingCertPem);
  assert.ok(sans.includes('192.0.2.10') && sans.includes('192.0.2.11'), sans.join(','));
});

test('replicas starting together on one cert dir agree on one CA', async (t) => {
  const dir = tmpDir(t);
  const all = await Promise.all([1, 2, 3].map((i) => ensurePki(options(dir, { advertiseAddress: `192.0.2.${i}` }))));
  assert.equal(new Set(all.map((p) => p.caCertPem)).size, 1);
  const sans = certSans(readFileSync(all[0]!.files.servingCert, 'utf8'));
  for (const i of [1, 2, 3]) assert.ok(sans.includes(`192.0.2.${i}`), sans.join(','));
});

test("--tls-cert-file is served as given; --client-ca-file without kapi's CA means no admin certificate", async (t) => {
  const dir = tmpDir(t);
  const otherKey = await generateKey('ecdsa');
  const other = await createCA('other-ca', 10, otherKey);
  const leafKey = await generateKey('ecdsa');
  const leaf = await issueCert(other, { commonName: 'srv', sans: ['127.0.0.1'], usage: 'server', validDays: 10 }, leafKey);
  writeFileSync(path.join(dir, 'srv.crt'), leaf + other.certPem);
  writeFileSync(path.join(dir, 'srv.key'), leafKey.privateKeyPem);
  writeFileSync(path.join(dir, 'client-ca.crt'), other.certPem);
  const pki = await ensurePki(
    options(path.join(dir, 'pki'), {
      tlsCertFile: path.join(dir, 'srv.crt'),
      tlsPrivateKeyFile: path.join(dir, 'srv.key'),
      clientCaFile: path.join(dir, 'client-ca.crt'),
    }),
  );
  assert.equal(pki.servingCertPem, leaf + other.certPem);
  assert.equal(pki.servingCaPem, other.certPem);
  assert.equal(pki.clientCaPem, other.certPem);
  assert.equal(pki.admin, undefined);
});

test('a key that does not match --tls-cert-file is refused', async (t) => {
  const dir = tmpDir(t);
  const ca = await createCA('x', 10, await generateKey('ecdsa'));
  writeFileSync(
    path.join(dir, 'srv.crt'),
    await issueCert(ca, { commonName: 'srv', usage: 'server', validDays: 10 }, await generateKey('ecdsa')),
  );
  writeFileSync(path.join(dir, 'srv.key'), (await generateKey('ecdsa')).privateKeyPem);
  await assert.rejects(
    ensurePki(options(path.join(dir, 'pki'), { tlsCertFile: path.join(dir, 'srv.crt'), tlsPrivateKeyFile: path.join(dir, 'srv.key') })),
    /does not match/,
  );
});

test('required names include a specific bind address but not a wildcard', () => {
  const base = options('/x');
  assert.ok(requiredServingSans({ ...base, bindAddress: '192.0.2.5' }).includes('192.0.2.5'));
  assert.ok(!requiredServingSans({ ...base, bindAddress: '0.0.0.0' }).includes('0.0.0.0'));
  // IPv6 spellings compare by value
  assert.equal(requiredServingSans({ ...base, extraSans: ['0:0:0:0:0:0:0:1'] }).filter((s) => s === '::1').length, 1);
});
