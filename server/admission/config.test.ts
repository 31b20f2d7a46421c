// The admission flags: kube's start-up errors, the enabled set in kube's order, the
// AdmissionConfiguration file with embedded and path configurations.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { enabledPluginNames, readAdmissionConfigFile, validateAdmissionFlags } from './config.js';
import { ALL_ORDERED_PLUGINS, DEFAULT_ON_PLUGINS } from './order.js';

const none = { enable: [], disable: [], admissionControl: [] };

test("unknown names and overlaps are start-up errors with kube's messages", () => {
  assert.deepEqual(validateAdmissionFlags({ ...none, enable: ['Nope'] }), ['enable-admission-plugins plugin "Nope" is unknown']);
  assert.deepEqual(validateAdmissionFlags({ ...none, disable: ['Nah'] }), ['disable-admission-plugins plugin "Nah" is unknown']);
  assert.deepEqual(validateAdmissionFlags({ ...none, enable: ['AlwaysDeny', 'LimitRanger'], disable: ['LimitRanger', 'AlwaysDeny'] }), [
    '[AlwaysDeny LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped',
  ]);
  assert.deepEqual(validateAdmissionFlags({ ...none, admissionControl: ['X'], enable: ['AlwaysDeny'] }), [
    'admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive',
    'admission-control plugin "X" is unknown',
  ]);
  assert.deepEqual(validateAdmissionFlags({ ...none, enable: ['AlwaysDeny'], disable: ['ResourceQuota'] }), []);
});

test("the enabled set: defaults plus enabled minus disabled, in kube's order whatever the flag order", () => {
  const defaults = enabledPluginNames(none);
  assert.deepEqual(
    defaults,
    ALL_ORDERED_PLUGINS.filter((p) => DEFAULT_ON_PLUGINS.has(p)),
  );
  const names = enabledPluginNames({ ...none, enable: ['AlwaysDeny', 'AlwaysAdmit'], disable: ['MutatingAdmissionWebhook'] });
  assert.equal(names[0], 'AlwaysAdmit');
  assert.equal(names.at(-1), 'AlwaysDeny');
  assert.ok(!names.includes('MutatingAdmissionWebhook'));
  assert.ok(names.includes('ValidatingAdmissionWebhook'));
  // --admission-control replaces the default set
  assert.deepEqual(enabledPluginNames({ ...none, admissionControl: ['ValidatingAdmissionWebhook', 'NamespaceLifecycle'] }), [
    'NamespaceLifecycle',
    'ValidatingAdmissionWebhook',
  ]);
});

test('AdmissionConfiguration: embedded configuration and a path relative to the file', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'adm-config-'));
  try {
    writeFileSync(
      path.join(dir, 'pss.yaml'),
      'apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\n',
    );
    const file = path.join(dir, 'admission.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: PodSecurity',
        '  path: pss.yaml',
        '- name: EventRateLimit',
        '  configuration:',
        '    kind: Configuration',
        '    limits: []',
      ].join('\n'),
    );
    const m = readAdmissionConfigFile(file);
    assert.deepEqual(m.get('PodSecurity'), {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline' },
    });
    assert.deepEqual(m.get('EventRateLimit'), { kind: 'Configuration', limits: [] });
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\n');
    assert.throws(() => readAdmissionConfigFile(file), /^Error: failed to read plugin config: /);
    assert.throws(
      () => readAdmissionConfigFile(path.join(dir, 'missing.yaml')),
      /failed to read plugin config: unable to read admission control configuration/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
