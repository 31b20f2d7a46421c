import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadWebhookTarget } from './webhook.js';

test("a webhook kubeconfig is read as client-go reads it: the current context's cluster and user, go-yaml v2's booleans", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-webhook-kubeconfig-'));
  try {
    const file = path.join(dir, 'kubeconfig');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: second',
        'clusters:',
        '- name: one',
        '  cluster: {server: "https://one.example:8443"}',
        '- name: two',
        '  cluster:',
        '    server: https://two.example:9443/authorize',
        '    insecure-skip-tls-verify: yes',
        'users:',
        '- name: reviewer',
        '  user: {token: "0644"}',
        'contexts:',
        '- name: first',
        '  context: {cluster: one, user: reviewer}',
        '- name: second',
        '  context: {cluster: two, user: reviewer}',
      ].join('\n'),
    );
    const target = loadWebhookTarget(file);
    assert.equal(target.url.href, 'https://two.example:9443/authorize');
    assert.equal(target.insecure, true, '`yes` is true to go-yaml v2');
    assert.equal(target.token, '0644', 'a quoted token stays text');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
