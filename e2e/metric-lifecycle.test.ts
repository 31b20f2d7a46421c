// kube's metric lifecycle with kubectl 1.33's `get --raw /metrics`: stability levels in the
// help texts; metrics deprecated before 1.33 (the encryption reload's success and failure
// counters, deprecated in 1.30) hidden by default and shown, marked deprecated, with
// --show-hidden-metrics-for-version=1.32; --disabled-metrics; a version other than 1.32
// stops start-up with kube's message; the meta metrics.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectlOk, startKapi, waitFor, type KapiProcess } from './harness.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-metric-lifecycle-'));
const encryption = path.join(dir, 'encryption.yaml');
const config = (keyName: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aescbc:
          keys:
            - name: ${keyName}
              secret: ${Buffer.alloc(32, 7).toString('base64')}
      - identity: {}
`;

const running: KapiProcess[] = [];

after(async () => {
  for (const k of running) await k.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function start(extraArgs: string[]): Promise<KapiProcess> {
  writeFileSync(encryption, config('key1'));
  const kapi = await startKapi({
    extraArgs: ['--encryption-provider-config', encryption, '--encryption-provider-config-automatic-reload', ...extraArgs],
  });
  running.push(kapi);
  return kapi;
}

/** changes the encryption configuration and waits for kapi to count the reload */
async function reload(kapi: KapiProcess): Promise<string> {
  writeFileSync(encryption, config('key2'));
  return waitFor(
    'the encryption reload counted',
    async () => {
      const text = await kubectlOk(['get', '--raw', '/metrics'], { kubeconfig: kapi.kubeconfig });
      return /^apiserver_encryption_config_controller_automatic_reloads_total\{status="success",/m.test(text) ? text : undefined;
    },
    30_000,
  );
}

test('by default the metrics deprecated before 1.33 are hidden and the others state their level', async () => {
  const kapi = await start([]);
  const text = await reload(kapi);
  assert.match(text, /^# HELP apiserver_encryption_config_controller_automatic_reloads_total \[ALPHA\] /m);
  assert.match(text, /^# HELP apiserver_request_total \[STABLE\] /m);
  assert.doesNotMatch(text, /apiserver_encryption_config_controller_automatic_reload_success_total/);
  assert.doesNotMatch(text, /apiserver_encryption_config_controller_automatic_reload_failures_total/);
  assert.match(text, /^hidden_metrics_total 2$/m);
  assert.match(text, /^disabled_metrics_total 0$/m);
  assert.match(text, /^registered_metrics_total\{stability_level="STABLE",deprecated_version=""\} [1-9]\d*$/m);
  await kapi.stop();
});

test('--show-hidden-metrics-for-version=1.32 shows them, marked deprecated; --disabled-metrics hides by name', async () => {
  const kapi = await start([
    '--show-hidden-metrics-for-version=1.32',
    '--disabled-metrics=apiserver_request_total,apiserver_longrunning_requests',
  ]);
  const text = await reload(kapi);
  assert.match(
    text,
    /^# HELP apiserver_encryption_config_controller_automatic_reload_success_total \[ALPHA\] \(Deprecated since 1\.30\.0\) /m,
  );
  assert.match(
    text,
    /^apiserver_encryption_config_controller_automatic_reload_success_total\{apiserver_id_hash="sha256:[0-9a-f]{64}"\} 1$/m,
  );
  assert.match(text, /^# TYPE apiserver_encryption_config_controller_automatic_reload_failures_total counter$/m);
  assert.doesNotMatch(text, /^apiserver_request_total\{/m);
  assert.doesNotMatch(text, /^# HELP apiserver_longrunning_requests /m);
  assert.match(text, /^apiserver_request_duration_seconds_count\{/m);
  assert.match(text, /^disabled_metrics_total 2$/m);
  assert.match(text, /^hidden_metrics_total 2$/m);
  assert.match(text, /^registered_metrics_total\{stability_level="ALPHA",deprecated_version="1\.30\.0"\} 2$/m);
});

test("any other --show-hidden-metrics-for-version stops start-up with kube's message", async () => {
  await assert.rejects(
    startKapi({ extraArgs: ['--show-hidden-metrics-for-version=1.31'], readyTimeoutMs: 60_000 }),
    /--show-hidden-metrics-for-version must be omitted or have the value '1\.32'\. Only the previous minor version is allowed/,
  );
});
