// kapi on an etcd that serves clients over TLS and requires a client certificate
// (`--client-cert-auth`), with --etcd-cafile/--etcd-certfile/--etcd-keyfile. The CA and the
// certificates are made here. kubectl 1.33 writes, reads and watches through kapi; etcdctl
// with the same client certificate finds the objects in etcd, and without one is refused, so
// kapi's success shows it presents its certificate and trusts etcd's CA.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { etcdctl, kubectlOk, kubectlSpawn, startEtcd, startKapi, uniqueName, type EtcdProcess, type KapiProcess } from './harness.js';

describe('kapi with etcd over TLS and client-certificate authentication', () => {
  let dir: string;
  let etcd: EtcdProcess;
  let kapi: KapiProcess;
  let clientFlags: { caFile: string; certFile: string; keyFile: string };
  let strangerFlags: { certFile: string; keyFile: string };
  const ns = uniqueName('etcd-tls');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-etcd-tls-'));
    const file = (name: string, content: string): string => {
      const p = path.join(dir, name);
      writeFileSync(p, content, { mode: 0o600 });
      return p;
    };
    const ca = await createCA('etcd-ca', 1, await generateKey('ecdsa'));
    const serverKey = await generateKey('ecdsa');
    const serverCert = await issueCert(
      ca,
      { commonName: 'etcd', sans: ['127.0.0.1', 'localhost'], usage: 'server', validDays: 1 },
      serverKey,
    );
    const clientKey = await generateKey('ecdsa');
    const clientCert = await issueCert(ca, { commonName: 'kube-apiserver-etcd-client', usage: 'client', validDays: 1 }, clientKey);
    const otherCA = await createCA('another-ca', 1, await generateKey('ecdsa'));
    const strangerKey = await generateKey('ecdsa');
    const strangerCert = await issueCert(otherCA, { commonName: 'kube-apiserver-etcd-client', usage: 'client', validDays: 1 }, strangerKey);

    clientFlags = {
      caFile: file('ca.crt', ca.certPem),
      certFile: file('client.crt', clientCert),
      keyFile: file('client.key', clientKey.privateKeyPem),
    };
    strangerFlags = { certFile: file('stranger.crt', strangerCert), keyFile: file('stranger.key', strangerKey.privateKeyPem) };
    etcd = await startEtcd({
      tls: { caFile: clientFlags.caFile, certFile: file('server.crt', serverCert), keyFile: file('server.key', serverKey.privateKeyPem) },
    });
    assert.match(etcd.endpoint, /^https:\/\/127\.0\.0\.1:\d+$/);
    kapi = await startKapi({
      etcdServers: etcd.endpoint,
      extraArgs: ['--etcd-cafile', clientFlags.caFile, '--etcd-certfile', clientFlags.certFile, '--etcd-keyfile', clientFlags.keyFile],
    });
  });
  after(async () => {
    await kapi?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is ready, with the etcd health checks passing', async () => {
    const out = await kubectlOk(['get', '--raw', '/readyz?verbose'], admin());
    assert.match(out, /^\[\+\]etcd ok$/m);
    assert.match(out, /^\[\+\]etcd-readiness ok$/m);
    assert.match(out, /readyz check passed/);
  });

  it('writes, reads and watches through kubectl; etcd holds the objects', async () => {
    await kubectlOk(['create', 'namespace', ns], admin());
    const watch = kubectlSpawn(['get', 'configmaps', '-n', ns, '-w', '-o', 'name'], admin());
    try {
      await kubectlOk(['create', 'configmap', 'over-tls', '-n', ns, '--from-literal=greeting=hello-over-tls'], admin());
      await watch.waitForOutput(/^configmap\/over-tls$/m);
    } finally {
      await watch.stop();
    }
    assert.equal(await kubectlOk(['get', 'configmap', 'over-tls', '-n', ns, '-o', 'jsonpath={.data.greeting}'], admin()), 'hello-over-tls');

    const read = await etcdctl(etcd.endpoint, [
      '--cacert',
      clientFlags.caFile,
      '--cert',
      clientFlags.certFile,
      '--key',
      clientFlags.keyFile,
      'get',
      `/registry/configmaps/${ns}/over-tls`,
      '--print-value-only',
    ]);
    assert.equal(read.code, 0, read.stderr);
    assert.match(read.stdout, /hello-over-tls/);
  });

  it('etcd refuses a client without a certificate and one whose certificate another CA signed', async () => {
    const key = ['get', '/registry/namespaces/default', '--print-value-only', '--dial-timeout', '3s', '--command-timeout', '5s'];
    const anonymous = await etcdctl(etcd.endpoint, ['--cacert', clientFlags.caFile, ...key]);
    assert.notEqual(anonymous.code, 0, anonymous.stdout);
    const stranger = await etcdctl(etcd.endpoint, [
      '--cacert',
      clientFlags.caFile,
      '--cert',
      strangerFlags.certFile,
      '--key',
      strangerFlags.keyFile,
      ...key,
    ]);
    assert.notEqual(stranger.code, 0, stranger.stdout);
    const trusted = await etcdctl(etcd.endpoint, [
      '--cacert',
      clientFlags.caFile,
      '--cert',
      clientFlags.certFile,
      '--key',
      clientFlags.keyFile,
      ...key,
    ]);
    assert.equal(trusted.code, 0, trusted.stderr);
  });
});
