import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { errorString } from '../../machinery/validation/field-error.js';
import { loadPodSecurityConfig } from './config.js';
import { levelVersionString, parseVersion, policyToEvaluate, type Policy } from './policy.js';

const privileged: Policy = loadPodSecurityConfig(undefined).defaults;

function show(p: Policy) {
  return [p.enforce, p.audit, p.warn].map(levelVersionString).join(' ');
}

describe('policyToEvaluate', () => {
  it('no labels: the defaults', () => {
    assert.equal(show(policyToEvaluate({}, privileged).policy), 'privileged:latest privileged:latest privileged:latest');
  });

  it('enforce raises warn when warn is not set', () => {
    const r = policyToEvaluate(
      { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.24' },
      privileged,
    );
    assert.equal(show(r.policy), 'baseline:v1.24 privileged:latest baseline:v1.24');
    assert.deepEqual(r.errors, []);
  });

  it('bad values: enforce fails closed, audit and warn open, with field errors', () => {
    const r = policyToEvaluate(
      {
        'pod-security.kubernetes.io/enforce': 'strict',
        'pod-security.kubernetes.io/audit': 'x',
        'pod-security.kubernetes.io/warn-version': '1.2',
      },
      privileged,
    );
    assert.equal(show(r.policy), 'restricted:latest privileged:latest privileged:latest');
    assert.deepEqual(r.errors.map(errorString), [
      'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "x": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.2": must be "latest" or "v1.x"',
    ]);
  });

  it('versions', () => {
    assert.deepEqual(parseVersion('v1.0').version, { latest: false, minor: 0 });
    assert.ok(parseVersion('v1.01').error);
    assert.ok(parseVersion('v2.1').error);
  });
});

describe('PodSecurityConfiguration', () => {
  it('defaults and exemptions', () => {
    const c = loadPodSecurityConfig({
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline', 'audit-version': 'v1.25' },
      exemptions: { usernames: ['admin'], namespaces: ['kube-system'], runtimeClasses: ['kata'] },
    });
    assert.equal(show(c.defaults), 'baseline:latest privileged:v1.25 privileged:latest');
    assert.deepEqual(c.exemptions, { usernames: ['admin'], namespaces: ['kube-system'], runtimeClasses: ['kata'] });
  });

  it('invalid configurations are start-up errors', () => {
    assert.throws(
      () =>
        loadPodSecurityConfig({
          apiVersion: 'pod-security.admission.config.k8s.io/v1',
          kind: 'PodSecurityConfiguration',
          defaults: { enforce: 'x' },
        }),
      /PodSecurity invalid: defaults.enforce: Invalid value: "x": must be one of privileged, baseline, restricted/,
    );
    assert.throws(
      () =>
        loadPodSecurityConfig({
          apiVersion: 'pod-security.admission.config.k8s.io/v1',
          kind: 'PodSecurityConfiguration',
          exemptions: { usernames: ['a', 'a'] },
        }),
      /exemptions.usernames\[1\]: Duplicate value: "a"/,
    );
    assert.throws(() => loadPodSecurityConfig({ apiVersion: 'v1', kind: 'Other' }), /configuration error/);
  });
});
