// Encryption at rest: kapi with --encryption-provider-config (Secrets on aescbc) and
// --encryption-provider-config-automatic-reload, on an etcd this test reads with etcdctl.
// kubectl 1.33 creates, gets and watches Secrets; etcd holds only ciphertext with kube's
// prefix; a key rotation plus `kubectl get secrets -A -o json | kubectl replace -f -`
// re-encrypts with the new key; a changed file is picked up without a restart, a broken one
// is ignored; a value no key opens fails for that Secret only.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  etcdctl,
  kubectl,
  kubectlOk,
  kubectlSpawn,
  startEtcd,
  startKapi,
  uniqueName,
  waitFor,
  type EtcdProcess,
  type KapiProcess,
} from './harness.js';

const KEY1 = Buffer.alloc(32, 0x11).toString('base64');
const KEY2 = Buffer.alloc(32, 0x22).toString('base64');
const KEY3 = Buffer.alloc(16, 0x33).toString('base64');

const configFile = (providers: string): string => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
${providers}
`;
const aescbc = (...keys: Array<[string, string]>) =>
  `      - aescbc:\n          keys:\n${keys.map(([name, secret]) => `            - name: ${name}\n              secret: ${secret}\n`).join('')}`;
const IDENTITY = '      - identity: {}\n';

describe('encryption at rest', () => {
  let etcd: EtcdProcess;
  let kapi: KapiProcess;
  let dir: string;
  let configPath: string;
  const ns = uniqueName('enc');
  const opts = () => ({ kubeconfig: kapi.kubeconfig });

  /** the raw value etcd holds for a key under /registry (binary bytes as latin1) */
  async function stored(key: string): Promise<string> {
    const r = await etcdctl(etcd.endpoint, ['get', `/registry${key}`, '--print-value-only']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  }

  /** writes a new config and waits until kapi writes new Secrets with `expectedPrefix` */
  async function reloadTo(text: string, expectedPrefix: string): Promise<void> {
    writeFileSync(configPath, text);
    let i = 0;
    await waitFor(
      `new Secrets stored with ${expectedPrefix}`,
      async () => {
        const name = `probe-${++i}`;
        await kubectlOk(['create', 'secret', 'generic', name, '-n', ns, '--from-literal=p=x'], opts());
        const value = await stored(`/secrets/${ns}/${name}`);
        await kubectlOk(['delete', 'secret', name, '-n', ns, '--wait=false'], opts());
        return value.startsWith(expectedPrefix);
      },
      60_000,
      500,
    );
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-enc-'));
    configPath = path.join(dir, 'encryption.yaml');
    writeFileSync(configPath, configFile(aescbc(['key1', KEY1]) + IDENTITY));
    etcd = await startEtcd();
    kapi = await startKapi({
      etcdServers: etcd.endpoint,
      extraArgs: ['--encryption-provider-config', configPath, '--encryption-provider-config-automatic-reload'],
    });
    await kubectlOk(['create', 'namespace', ns], opts());
  });
  after(async () => {
    await kapi?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores a Secret as aescbc ciphertext; kubectl get and a watch see the plaintext', async () => {
    const w = kubectlSpawn(['get', 'secrets', '-n', ns, '-w', '-o', 'name'], opts());
    try {
      await kubectlOk(['create', 'secret', 'generic', 's1', '-n', ns, '--from-literal=password=hunter2-s3cr3t'], opts());
      const value = await stored(`/secrets/${ns}/s1`);
      assert.ok(value.startsWith('k8s:enc:aescbc:v1:key1:'), value.slice(0, 40));
      assert.equal(value.includes('hunter2-s3cr3t'), false);
      assert.equal(value.includes(Buffer.from('hunter2-s3cr3t').toString('base64')), false);
      const data = await kubectlOk(['get', 'secret', 's1', '-n', ns, '-o', 'jsonpath={.data.password}'], opts());
      assert.equal(Buffer.from(data, 'base64').toString(), 'hunter2-s3cr3t');
      await w.waitForOutput(/^secret\/s1$/m);
    } finally {
      await w.stop();
    }
    // resources the configuration does not name stay plaintext
    await kubectlOk(['create', 'configmap', 'c1', '-n', ns, '--from-literal=a=visible'], opts());
    assert.ok((await stored(`/configmaps/${ns}/c1`)).startsWith('{'));
  });

  it('kube-apiserver health checks for automatic reload are there and pass', async () => {
    const r = await kapi.http.get('/readyz?verbose');
    assert.equal(r.status, 200, r.body);
    assert.match(r.body, /\[\+\]kms-providers ok/);
    assert.match(r.body, /\[\+\]poststarthook\/start-encryption-provider-config-automatic-reload ok/);
    const live = await kapi.http.get('/livez?verbose');
    assert.doesNotMatch(live.body, /kms-providers/);
  });

  it('key rotation: new key first, old key second, then get | replace re-encrypts with the new key', async () => {
    await kubectlOk(['create', 'secret', 'generic', 's2', '-n', ns, '--from-literal=token=abc'], opts());
    assert.ok((await stored(`/secrets/${ns}/s2`)).startsWith('k8s:enc:aescbc:v1:key1:'));
    await reloadTo(configFile(aescbc(['key2', KEY2], ['key1', KEY1]) + IDENTITY), 'k8s:enc:aescbc:v1:key2:');
    // old data still reads
    assert.equal(await kubectlOk(['get', 'secret', 's1', '-n', ns, '-o', 'jsonpath={.metadata.name}'], opts()), 's1');
    const all = await kubectlOk(['get', 'secrets', '-A', '-o', 'json'], opts());
    await kubectlOk(['replace', '-f', '-'], { ...opts(), input: all });
    for (const name of ['s1', 's2']) {
      const value = await stored(`/secrets/${ns}/${name}`);
      assert.ok(value.startsWith('k8s:enc:aescbc:v1:key2:'), `${name}: ${value.slice(0, 40)}`);
    }
    // key1 can go now
    await reloadTo(configFile(aescbc(['key2', KEY2]) + IDENTITY), 'k8s:enc:aescbc:v1:key2:');
    const data = await kubectlOk(['get', 'secret', 's1', '-n', ns, '-o', 'jsonpath={.data.password}'], opts());
    assert.equal(Buffer.from(data, 'base64').toString(), 'hunter2-s3cr3t');
  });

  it('automatic reload: a new provider writes at once; an invalid file is logged and ignored', async () => {
    await reloadTo(
      configFile(
        `      - aesgcm:\n          keys:\n            - name: gcm1\n              secret: ${KEY3}\n` + aescbc(['key2', KEY2]) + IDENTITY,
      ),
      'k8s:enc:aesgcm:v1:gcm1:',
    );
    await kubectlOk(['create', 'secret', 'generic', 's3', '-n', ns, '--from-literal=k=v'], opts());
    assert.ok((await stored(`/secrets/${ns}/s3`)).startsWith('k8s:enc:aesgcm:v1:gcm1:'));
    assert.equal(
      await kubectlOk(['get', 'secret', 's2', '-n', ns, '-o', 'jsonpath={.data.token}'], opts()),
      Buffer.from('abc').toString('base64'),
    );

    writeFileSync(configPath, configFile('      - aescbc:\n          keys:\n            - name: short\n              secret: c2hvcnQ=\n'));
    await waitFor('the reload error in the log', () => /encryption provider configuration not reloaded/.test(kapi.logs()), 30_000, 200);
    await kubectlOk(['create', 'secret', 'generic', 's4', '-n', ns, '--from-literal=k=v'], opts());
    assert.ok((await stored(`/secrets/${ns}/s4`)).startsWith('k8s:enc:aesgcm:v1:gcm1:'));
  });

  it('a value no key opens fails with an InternalError naming the key; other Secrets still read', async () => {
    const key = `/registry/secrets/${ns}/lost`;
    const put = await etcdctl(etcd.endpoint, ['put', key, 'k8s:enc:aescbc:v1:key1:0123456789abcdef0123456789abcdef']);
    assert.equal(put.code, 0, put.stderr);
    const r = await kubectl(['get', 'secret', 'lost', '-n', ns], opts());
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      new RegExp(`Internal error occurred: unable to transform key "${key}": no matching key was found for the provided AES transformer`),
    );
    assert.equal(await kubectlOk(['get', 'secret', 's3', '-n', ns, '-o', 'jsonpath={.metadata.name}'], opts()), 's3');
    await etcdctl(etcd.endpoint, ['del', key]);
  });
});

describe('encryption at rest without automatic reload', () => {
  let etcd: EtcdProcess;
  let kapi: KapiProcess | undefined;
  let dir: string;
  let configPath: string;
  const ns = uniqueName('enc-static');

  async function stored(key: string): Promise<string> {
    const r = await etcdctl(etcd.endpoint, ['get', `/registry${key}`, '--print-value-only']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-enc-'));
    configPath = path.join(dir, 'encryption.yaml');
    writeFileSync(configPath, configFile(aescbc(['key1', KEY1])));
    etcd = await startEtcd();
  });
  after(async () => {
    await kapi?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a changed file takes effect at the next start; no reload health checks', async () => {
    kapi = await startKapi({ etcdServers: etcd.endpoint, extraArgs: ['--encryption-provider-config', configPath] });
    const opts = { kubeconfig: kapi.kubeconfig };
    await kubectlOk(['create', 'namespace', ns], opts);
    await kubectlOk(['create', 'secret', 'generic', 'a', '-n', ns, '--from-literal=k=v'], opts);
    assert.ok((await stored(`/secrets/${ns}/a`)).startsWith('k8s:enc:aescbc:v1:key1:'));
    const ready = await kapi.http.get('/readyz?verbose');
    assert.equal(ready.status, 200, ready.body);
    assert.doesNotMatch(ready.body, /kms-providers|encryption-provider-config-automatic-reload/);

    writeFileSync(
      configPath,
      configFile(`      - aesgcm:\n          keys:\n            - name: gcm1\n              secret: ${KEY3}\n` + aescbc(['key1', KEY1])),
    );
    await kubectlOk(['create', 'secret', 'generic', 'b', '-n', ns, '--from-literal=k=v'], opts);
    assert.ok((await stored(`/secrets/${ns}/b`)).startsWith('k8s:enc:aescbc:v1:key1:'));
    await kapi.stop();
    kapi = undefined;

    kapi = await startKapi({ etcdServers: etcd.endpoint, extraArgs: ['--encryption-provider-config', configPath] });
    const opts2 = { kubeconfig: kapi.kubeconfig };
    await kubectlOk(['create', 'secret', 'generic', 'c', '-n', ns, '--from-literal=k=v'], opts2);
    assert.ok((await stored(`/secrets/${ns}/c`)).startsWith('k8s:enc:aesgcm:v1:gcm1:'));
    const names = await kubectlOk(['get', 'secrets', '-n', ns, '-o', 'name'], opts2);
    assert.deepEqual(names.trim().split('\n'), ['secret/a', 'secret/b', 'secret/c']);
  });
});
