// Encryption at rest with the secretbox provider, on a kapi process and an etcd this test
// reads directly with etcdctl: kubectl 1.33 creates Secrets; etcd holds
// `k8s:enc:secretbox:v1:<key name>:`, a 24-byte nonce and the sealed box (kube's wire format),
// never the data; two equal Secrets get different nonces; kubectl reads the data back, also
// from a new kapi process with the same configuration.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { etcdctl, kubectlOk, startEtcd, startKapi, uniqueName, type EtcdProcess, type KapiProcess } from './harness.js';

const PREFIX = 'k8s:enc:secretbox:v1:box-key-1:';
const NONCE_BYTES = 24;
const TAG_BYTES = 16;
const SECRET_VALUE = 'correct-horse-battery-staple';

describe('encryption at rest: secretbox', () => {
  let dir: string;
  let etcd: EtcdProcess;
  let kapi: KapiProcess;
  let kapiArgs: string[];
  const ns = uniqueName('secretbox');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });

  /** the bytes etcd holds for a key under /registry (etcdctl's JSON gives them base64) */
  async function stored(key: string): Promise<Buffer> {
    const r = await etcdctl(etcd.endpoint, ['get', `/registry${key}`, '-w', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const kvs = (JSON.parse(r.stdout) as { kvs?: { value: string }[] }).kvs ?? [];
    assert.equal(kvs.length, 1, `etcd has no ${key}`);
    return Buffer.from(kvs[0]!.value, 'base64');
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-secretbox-'));
    const config = path.join(dir, 'encryption.yaml');
    writeFileSync(
      config,
      `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - secretbox:
          keys:
            - name: box-key-1
              secret: ${Buffer.alloc(32, 0x5b).toString('base64')}
      - identity: {}
`,
    );
    etcd = await startEtcd();
    kapiArgs = ['--encryption-provider-config', config];
    kapi = await startKapi({ etcdServers: etcd.endpoint, dataDir: path.join(dir, 'kapi'), extraArgs: kapiArgs });
    await kubectlOk(['create', 'namespace', ns], admin());
  });
  after(async () => {
    await kapi?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores Secrets as secretbox ciphertext with kube prefix and a fresh nonce each', async () => {
    for (const name of ['twin-a', 'twin-b']) {
      await kubectlOk(['create', 'secret', 'generic', name, '-n', ns, `--from-literal=password=${SECRET_VALUE}`], admin());
    }
    const a = await stored(`/secrets/${ns}/twin-a`);
    const b = await stored(`/secrets/${ns}/twin-b`);
    for (const value of [a, b]) {
      assert.equal(value.subarray(0, PREFIX.length).toString('latin1'), PREFIX);
      assert.ok(value.length > PREFIX.length + NONCE_BYTES + TAG_BYTES, `only ${value.length} bytes`);
      for (const plain of [SECRET_VALUE, Buffer.from(SECRET_VALUE).toString('base64'), '"kind"', 'k8s\u0000']) {
        assert.equal(value.includes(plain), false, `etcd holds ${JSON.stringify(plain)}`);
      }
    }
    const nonce = (v: Buffer) => v.subarray(PREFIX.length, PREFIX.length + NONCE_BYTES).toString('hex');
    assert.notEqual(nonce(a), nonce(b));
    // resources the configuration does not name stay plaintext
    await kubectlOk(['create', 'configmap', 'plain', '-n', ns, '--from-literal=a=visible'], admin());
    assert.match((await stored(`/configmaps/${ns}/plain`)).toString('utf8'), /visible/);
  });

  it('kubectl reads the data back, also through a new kapi process', async () => {
    const read = async () =>
      Buffer.from(await kubectlOk(['get', 'secret', 'twin-a', '-n', ns, '-o', 'jsonpath={.data.password}'], admin()), 'base64').toString();
    assert.equal(await read(), SECRET_VALUE);
    await kapi.stop();
    kapi = await startKapi({ etcdServers: etcd.endpoint, dataDir: path.join(dir, 'kapi'), extraArgs: kapiArgs });
    assert.equal(await read(), SECRET_VALUE);
    const listed = JSON.parse(await kubectlOk(['get', 'secrets', '-n', ns, '-o', 'json'], admin())) as {
      items: { metadata: { name: string } }[];
    };
    assert.deepEqual(
      listed.items
        .map((s) => s.metadata.name)
        .filter((n) => n.startsWith('twin-'))
        .sort(),
      ['twin-a', 'twin-b'],
    );
  });
});
