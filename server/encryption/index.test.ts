import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkEncryptionFlags, loadEncryption, storedResources } from './index.js';

const K1 = Buffer.alloc(32, 1).toString('base64');
const AD = Buffer.from('/registry/secrets/ns/s');
const file = (provider: string) =>
  `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - ${provider}: {keys: [{name: k, secret: ${K1}}]}\n`;
const RESOURCES = storedResources([
  { group: '', resource: 'secrets' },
  { group: 'events.k8s.io', resource: 'events' },
  { group: '', resource: 'events' },
]);

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const writerPrefix = (enc: ReturnType<typeof loadEncryption>) =>
  enc.transformers.forKey('/secrets/ns/s')!.toStorage(Buffer.from('{}'), AD).toString('latin1').slice(0, 18);

test('storedResources: one entry per key prefix, events.k8s.io Events as core events', () => {
  assert.deepEqual(RESOURCES, [
    { group: '', resource: 'secrets', keyPrefix: '/secrets' },
    { group: '', resource: 'events', keyPrefix: '/events' },
  ]);
});

test('start-up errors: bad files and the reload flag without a file', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-enc-'));
  try {
    assert.throws(
      () => checkEncryptionFlags('', true),
      /--encryption-provider-config-automatic-reload must be set with --encryption-provider-config/,
    );
    checkEncryptionFlags('', false);
    const p = path.join(dir, 'enc.yaml');
    assert.throws(
      () => loadEncryption({ path: p, automaticReload: false, resources: RESOURCES }),
      /error while parsing file: error while loading file: error reading encryption provider configuration file/,
    );
    writeFileSync(p, '');
    assert.throws(() => loadEncryption({ path: p, automaticReload: false, resources: RESOURCES }), /is empty/);
    writeFileSync(p, file('aescbc').replace('{name: k, ', '{'));
    assert.throws(
      () => loadEncryption({ path: p, automaticReload: false, resources: RESOURCES }),
      /error while parsing file: .*name is a mandatory field for a key/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('automatic reload: a valid new file takes effect, an invalid one is reported and ignored', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-enc-'));
  const p = path.join(dir, 'enc.yaml');
  writeFileSync(p, file('aescbc'));
  const errors: string[] = [];
  let reloads = 0;
  const enc = loadEncryption({
    path: p,
    automaticReload: true,
    resources: RESOURCES,
    pollIntervalMs: 20,
    onReload: () => reloads++,
    onReloadError: (err) => errors.push(err.message),
  });
  try {
    assert.deepEqual(enc.checkNames, {
      healthzAndReadyz: ['kms-providers'],
      all: ['poststarthook/start-encryption-provider-config-automatic-reload'],
    });
    assert.equal(writerPrefix(enc), 'k8s:enc:aescbc:v1:');
    const oldData = enc.transformers.forKey('/secrets/ns/s')!.toStorage(Buffer.from('{}'), AD);
    writeFileSync(p, file('aesgcm'));
    await until(() => reloads === 1, 'the reload');
    assert.equal(writerPrefix(enc), 'k8s:enc:aesgcm:v1:');
    // the aescbc data no longer reads: that provider is gone from the configuration
    assert.throws(() => enc.transformers.forKey('/secrets/ns/s')!.fromStorage(oldData, AD), /no matching prefix found/);
    writeFileSync(p, file('secretbox').replace(K1, 'c2hvcnQ='));
    await until(() => errors.length === 1, 'the reload error');
    assert.match(errors[0]!, /^error processing encryption config file .*secret is not of the expected length/);
    assert.equal(writerPrefix(enc), 'k8s:enc:aesgcm:v1:');
    assert.equal(reloads, 1);
  } finally {
    enc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without automatic reload the file is read once', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-enc-'));
  const p = path.join(dir, 'enc.yaml');
  writeFileSync(p, file('aescbc'));
  const enc = loadEncryption({ path: p, automaticReload: false, resources: RESOURCES });
  try {
    assert.deepEqual(enc.checkNames, { healthzAndReadyz: [], all: [] });
    writeFileSync(p, file('aesgcm'));
    assert.equal(writerPrefix(enc), 'k8s:enc:aescbc:v1:');
  } finally {
    enc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
