// The client over https endpoints: a private CA, and a client certificate when etcd asks
// for one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCA, generateKey, issueCert } from '../../server/pki/x509.js';
import { startEtcd } from '../testing/etcd-server.js';
import { createEtcdClient } from './client.js';
import type { WatchMessage } from './types.js';

test('https endpoint with a private CA and client certificates', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-etcd-tls-'));
  const file = (name: string, content: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, content);
    return p;
  };
  const caKey = await generateKey('ecdsa');
  const ca = await createCA('etcd-ca', 1, caKey);
  const serverKey = await generateKey('ecdsa');
  const serverCert = await issueCert(
    ca,
    { commonName: 'etcd', sans: ['127.0.0.1', 'localhost'], usage: 'server', validDays: 1 },
    serverKey,
  );
  const clientKey = await generateKey('ecdsa');
  const clientCert = await issueCert(ca, { commonName: 'kapi', usage: 'client', validDays: 1 }, clientKey);
  const caFile = file('ca.crt', ca.certPem);
  const certFile = file('client.crt', clientCert);
  const keyFile = file('client.key', clientKey.privateKeyPem);

  const etcd = await startEtcd({
    tls: { caFile, certFile: file('server.crt', serverCert), keyFile: file('server.key', serverKey.privateKeyPem) },
  });
  const url = etcd.endpoint;
  const client = createEtcdClient({ endpoints: [url], caFile, certFile, keyFile });
  const anonymous = createEtcdClient({ endpoints: [url], caFile, requestTimeoutMs: 3000 });
  try {
    const put = await client.put(Buffer.from('/tls/a'), Buffer.from('secret'));
    assert.equal((await client.range({ key: Buffer.from('/tls/a') })).kvs[0]!.value.toString(), 'secret');
    const msgs: WatchMessage[] = [];
    const w = client.watch({ key: Buffer.from('/tls/a'), startRevision: put.header.revision }, (m) => msgs.push(m));
    const deadline = Date.now() + 15_000;
    while (!msgs.some((m) => m.kind === 'events') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    w.cancel();
    assert.equal(msgs[0]?.kind, 'events');
    // etcd requires a client certificate: without one there is no connection
    await assert.rejects(anonymous.range({ key: Buffer.from('/tls/a') }), (err: Error) => err.name === 'EtcdError');
  } finally {
    client.close();
    anonymous.close();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
