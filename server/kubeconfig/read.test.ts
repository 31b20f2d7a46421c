import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readKubeconfigTarget } from './read.js';

test("a kubeconfig is read as client-go reads it: the current context's cluster and user, go-yaml v2's booleans, a token file", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-kubeconfig-read-'));
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
    const target = readKubeconfigTarget(file);
    assert.equal(target.server.href, 'https://two.example:9443/authorize');
    assert.equal(target.insecureSkipVerify, true, '`yes` is true to go-yaml v2');
    assert.equal(target.token, '0644', 'a quoted token stays text');

    const first = readKubeconfigTarget(file, { context: 'first', server: 'https://override.example' });
    assert.equal(first.server.href, 'https://override.example/');
    assert.equal(first.insecureSkipVerify, false);

    writeFileSync(path.join(dir, 'token'), 'from-a-file\n');
    writeFileSync(
      file,
      'current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: "https://k"}}]\nusers: [{name: u, user: {tokenFile: token}}]\n',
    );
    assert.equal(readKubeconfigTarget(file).token, 'from-a-file');
    assert.throws(() => readKubeconfigTarget(file, { context: 'missing' }), /context was not found for specified context: missing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
