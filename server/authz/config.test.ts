import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { aggregate } from '../authn/jwt/config.js';
import { AuthorizationConfigError, decodeAuthorizationConfiguration, validateAuthorizationConfiguration } from './config.js';
import { validateModeFlags } from './index.js';

const errorsOf = (yaml: string) => aggregate(validateAuthorizationConfiguration(decodeAuthorizationConfiguration(yaml)));

describe('AuthorizationConfiguration', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authz-config-'));
  const kc = path.join(dir, 'hook.kubeconfig');
  writeFileSync(kc, 'apiVersion: v1\nkind: Config\n');
  const webhook = (extra: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: hook
  webhook:
${extra}`;
  const good = `    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: ${kc}
`;

  it('a valid file decodes with kube defaults', () => {
    const c = decodeAuthorizationConfiguration(
      webhook(good) + `    matchConditions:\n    - expression: "request.user != 'x'"\n- type: RBAC\n  name: rbac\n`,
    );
    assert.deepEqual(validateAuthorizationConfiguration(c), []);
    assert.equal(c.authorizers[0]!.webhook!.authorizedTTLMs, 300_000);
    assert.equal(c.authorizers[0]!.webhook!.unauthorizedTTLMs, 30_000);
  });

  it('kube field errors', () => {
    assert.equal(
      errorsOf('apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers: []\n'),
      'authorizers: Required value: at least one authorization mode must be defined',
    );
    assert.equal(
      errorsOf(
        'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: a\n- type: RBAC\n  name: b\n',
      ),
      'authorizers[1].type: Duplicate value: "RBAC"',
    );
    assert.equal(
      errorsOf('apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: ABAC\n  name: a\n'),
      'authorizers[0].type: Unsupported value: "ABAC": supported values: "Node", "RBAC", "Webhook"',
    );
    assert.match(
      errorsOf(webhook(good.replace('3s', '31s'))),
      /authorizers\[0\]\.webhook\.timeout: Invalid value: "31s": must be > 0s and <= 30s/,
    );
    assert.match(
      errorsOf(webhook(good.replace('NoOpinion', 'Maybe'))),
      /failurePolicy: Unsupported value: "Maybe": supported values: "NoOpinion", "Deny"/,
    );
    assert.match(
      errorsOf(webhook(good.replace(kc, 'relative.kubeconfig'))),
      /kubeConfigFile: Invalid value: "relative.kubeconfig": must be an absolute path/,
    );
    assert.match(
      errorsOf(
        webhook(
          good.replace('    matchConditionSubjectAccessReviewVersion: v1\n', '') + '    matchConditions:\n    - expression: "true"\n',
        ),
      ),
      /matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified/,
    );
    const many = Array.from({ length: 65 }, (_, i) => `    - expression: "request.user != 'u${i}'"\n`).join('');
    assert.match(errorsOf(webhook(good) + '    matchConditions:\n' + many), /matchConditions: Too many: 65: must have at most 64 items/);
    assert.match(
      errorsOf(webhook(good) + '    matchConditions:\n    - expression: "request.nope("\n'),
      /matchConditions\[0\]\.expression: Invalid value: "request.nope\(": compilation failed/,
    );
    assert.match(
      errorsOf(webhook(good) + '    matchConditions:\n    - expression: "true"\n    - expression: "true"\n'),
      /matchConditions\[1\]\.expression: Duplicate value: "true"/,
    );
  });

  it('strict decoding', () => {
    assert.throws(
      () =>
        decodeAuthorizationConfiguration(
          'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: a\n  extra: 1\n',
        ),
      AuthorizationConfigError,
    );
    assert.throws(() => decodeAuthorizationConfiguration('apiVersion: v1\nkind: Config\n'), /no kind "Config" is registered/);
  });

  it('flag checks of kube-apiserver', () => {
    const v = (o: Record<string, unknown>) =>
      new Map(Object.entries({ 'authorization-mode': ['AlwaysAllow'], ...o })) as Map<string, never>;
    assert.deepEqual(
      validateModeFlags(v({ 'authorization-config': '/x', 'authorization-mode': ['RBAC'] }), new Set(['authorization-mode'])),
      ['--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined'],
    );
    assert.deepEqual(validateModeFlags(v({ 'authorization-config': '/x' }), new Set()), []);
    assert.deepEqual(validateModeFlags(v({ 'authorization-mode': ['RBAC', 'RBAC'] }), new Set()), [
      'authorization-mode "RBAC" has mode specified more than once',
    ]);
    assert.deepEqual(validateModeFlags(v({ 'authorization-mode': ['Webhook'] }), new Set()), [
      "authorization-mode Webhook's authorization config file not passed",
    ]);
    assert.deepEqual(validateModeFlags(v({ 'authorization-mode': ['Bogus'] }), new Set()), [
      'authorization-mode "Bogus" is not a valid mode',
    ]);
  });

  it('cleans up', () => rmSync(dir, { recursive: true, force: true }));
});
