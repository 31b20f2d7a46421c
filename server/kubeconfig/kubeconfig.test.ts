import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { buildKubeconfig, localServerURL, writeKubeconfig, type Kubeconfig } from './kubeconfig.js';

const opts = { server: 'https://127.0.0.1:6443', caPem: 'CA', clientCertPem: 'CERT', clientKeyPem: 'KEY' };

test('one cluster, user and context, current; PEMs embedded as base64', () => {
  const k = buildKubeconfig(opts);
  assert.equal(k.clusters[0]!.name, 'kapi');
  assert.equal(k.clusters[0]!.cluster.server, 'https://127.0.0.1:6443');
  assert.equal(Buffer.from(k.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString(), 'CA');
  assert.equal(k.users[0]!.name, 'kubernetes-admin');
  assert.equal(Buffer.from(k.users[0]!.user['client-key-data'], 'base64').toString(), 'KEY');
  assert.equal(k['current-context'], 'kubernetes-admin@kapi');
  assert.deepEqual(k.contexts[0]!.context, { cluster: 'kapi', user: 'kubernetes-admin' });
});

test('written as YAML, readable by the owner only', (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-kubeconfig-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'admin.kubeconfig');
  writeKubeconfig(file, opts);
  assert.equal(statSync(file).mode & 0o077, 0);
  const back = parse(readFileSync(file, 'utf8')) as Kubeconfig;
  assert.deepEqual(back, buildKubeconfig(opts));
});

test('the server URL uses loopback for a wildcard bind and brackets IPv6', () => {
  assert.equal(localServerURL('0.0.0.0', 6443), 'https://127.0.0.1:6443');
  assert.equal(localServerURL('::', 6443), 'https://127.0.0.1:6443');
  assert.equal(localServerURL('192.0.2.7', 7443), 'https://192.0.2.7:7443');
  assert.equal(localServerURL('::1', 6443), 'https://[::1]:6443');
});
