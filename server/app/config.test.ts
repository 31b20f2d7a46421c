// Options from the flags: defaults, validation before anything starts (every problem at once,
// in kube-apiserver's words), completion.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseKapiFlags, type KapiConfig } from '../config/flags.js';
import { completeConfig } from './config.js';
import { InvalidOptionsError } from './options/problems.js';

const kapiBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'kapi');

function configOf(argv: string[]): KapiConfig {
  const outcome = parseKapiFlags(argv, os.tmpdir());
  assert.equal(outcome.kind, 'config');
  return outcome.config;
}

function problemsOf(argv: string[]): readonly string[] {
  try {
    completeConfig(configOf(argv));
  } catch (err) {
    assert.ok(err instanceof InvalidOptionsError, String(err));
    return err.problems;
  }
  assert.fail('the options were accepted');
}

test("defaults: every subsystem gets kube-apiserver's defaults, completed", () => {
  const c = completeConfig(configOf([]));
  assert.deepEqual(c.flowControl, { kind: 'priority-and-fairness', serverConcurrencyLimit: 600, maxQueueWaitMs: 15_000 });
  assert.equal(c.api.eventTTLSeconds, 3600);
  assert.equal(c.api.deleteCollectionWorkers, 1);
  assert.equal(c.storage.watchCache.enabled, true);
  assert.equal(c.storage.watchCache.defaultSize, 100);
  assert.equal(c.storage.storageFormat, 'json');
  assert.deepEqual(c.controllers, { garbageCollector: true, endpointReconciler: 'lease', apiServerIdentity: true });
  assert.equal(c.serving.maxUnreadResponseBytes, 256 * 1024 * 1024);
  assert.equal(c.serving.externalAddress, `${c.serving.advertiseAddress}:6443`);
  assert.deepEqual(c.aggregator, {});
  assert.ok(c.api.catalog.resources().some((r) => r.resource === 'pods'));
  assert.match(c.identity, /^kapi-.+-[0-9a-f-]{36}$/);
});

test('completion: values that follow from the flags', () => {
  const c = completeConfig(
    configOf([
      '--enable-priority-and-fairness=false',
      '--max-requests-inflight=7',
      '--max-mutating-requests-inflight=3',
      '--event-ttl=90s',
      '--watch-cache-sizes=pods#0,Deployments.apps#0',
      '--external-hostname=api.example.com',
      '--advertise-address=10.0.0.1',
      '--secure-port=7443',
      '--proxy-client-cert-file=proxy.crt',
      '--proxy-client-key-file=proxy.key',
    ]),
  );
  assert.deepEqual(c.flowControl, { kind: 'max-in-flight', readOnlyLimit: 7, mutatingLimit: 3 });
  assert.equal(c.api.eventTTLSeconds, 90);
  assert.deepEqual(
    [...c.storage.watchCache.sizes],
    [
      ['pods', 0],
      ['deployments.apps', 0],
    ],
  );
  assert.equal(c.serving.externalAddress, 'api.example.com');
  assert.equal(c.serving.advertiseAddress, '10.0.0.1');
  assert.deepEqual(c.aggregator.proxyClientCertificate, { certFile: 'proxy.crt', keyFile: 'proxy.key' });

  const ipv6 = completeConfig(configOf(['--advertise-address=fd00::1']));
  assert.equal(ipv6.serving.externalAddress, '[fd00::1]:6443');
});

test('one problem is reported as it is', () => {
  const argv = ['--runtime-config=apps/v9=true'];
  assert.deepEqual(problemsOf(argv), ['--runtime-config: group version apps/v9 that has not been registered']);
  assert.throws(() => completeConfig(configOf(argv)), { message: '--runtime-config: group version apps/v9 that has not been registered' });
});

test('every invalid option is reported together, as kube-apiserver aggregates them', () => {
  const argv = [
    '--enable-admission-plugins=NoSuchPlugin',
    '--watch-cache-sizes=pods#-1',
    '--encryption-provider-config-automatic-reload',
    '--proxy-client-cert-file=proxy.crt',
    '--kubelet-client-certificate=kubelet.crt',
  ];
  assert.deepEqual(problemsOf(argv), [
    'enable-admission-plugins plugin "NoSuchPlugin" is unknown',
    '--watch-cache-sizes: watch cache size cannot be negative: pods#-1',
    '--encryption-provider-config-automatic-reload must be set with --encryption-provider-config',
    '--proxy-client-cert-file and --proxy-client-key-file must be given together',
    '--kubelet-client-certificate and --kubelet-client-key must be specified together',
  ]);
  assert.throws(
    () => completeConfig(configOf(argv)),
    (err: Error) => err.message.startsWith('[enable-admission-plugins plugin "NoSuchPlugin" is unknown, --watch-cache-sizes: '),
  );
});

test('bin/kapi with invalid options exits 1 naming them all, having written nothing', (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kapi-options-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const r = spawnSync(process.execPath, [kapiBin, '--data-dir', dataDir, '--watch-cache-sizes=pods', '--proxy-client-key-file=proxy.key'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 1, r.stderr);
  const output = r.stdout + r.stderr;
  assert.match(output, /kapi failed to start/);
  assert.ok(output.includes('--watch-cache-sizes: invalid value of watch cache size: pods'), output);
  assert.ok(output.includes('--proxy-client-cert-file and --proxy-client-key-file must be given together'), output);
  // no PKI, no etcd member, no kubeconfig
  assert.deepEqual(readdirSync(dataDir), []);
});
