import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiserverMetrics } from './apiserver-metrics.js';
import { deprecatedLongAgo, lifecycleHelp, lifecycleOf, showHiddenMetricsVersionError } from './lifecycle.js';

const release = { major: 1, minor: 33 };

test('help texts state the stability level, then the deprecation, as component-base writes them', () => {
  assert.equal(lifecycleHelp('Counter of things.', { stability: 'STABLE' }), '[STABLE] Counter of things.');
  assert.equal(lifecycleHelp('Old.', { stability: 'ALPHA', deprecatedVersion: '1.30.0' }), '[ALPHA] (Deprecated since 1.30.0) Old.');
  assert.deepEqual(lifecycleOf('[ALPHA] (Deprecated since 1.30.0) Old.'), { stability: 'ALPHA', deprecatedVersion: '1.30.0' });
  assert.deepEqual(lifecycleOf('[BETA] New.'), { stability: 'BETA' });
  assert.deepEqual(lifecycleOf('no level'), { stability: 'ALPHA' });
});

test('a metric deprecated before the current minor release is hidden; one deprecated in it is not', () => {
  assert.equal(deprecatedLongAgo({ stability: 'ALPHA', deprecatedVersion: '1.32.0' }, release), true);
  assert.equal(deprecatedLongAgo({ stability: 'ALPHA', deprecatedVersion: '1.33.0' }, release), false);
  assert.equal(deprecatedLongAgo({ stability: 'ALPHA' }, release), false);
});

test("--show-hidden-metrics-for-version takes only the previous minor release, with kube's message", () => {
  assert.equal(showHiddenMetricsVersionError('', release), undefined);
  assert.equal(showHiddenMetricsVersionError('1.32', release), undefined);
  for (const v of ['1.31', '1.33', '1.32.0', 'v1.32']) {
    assert.equal(
      showHiddenMetricsVersionError(v, release),
      "--show-hidden-metrics-for-version must be omitted or have the value '1.32'. Only the previous minor version is allowed",
    );
  }
});

async function exposed(m: ApiserverMetrics): Promise<string> {
  m.recordConfigReload('encryption', 'success', 'replica-1');
  return m.registry.metrics();
}

test('hidden and disabled metrics are not exposed; the meta metrics count them', async () => {
  const m = new ApiserverMetrics();
  m.applyLifecycle({ release, showHidden: false, disabled: ['apiserver_request_total', 'no_such_metric'] });
  const text = await exposed(m);
  assert.match(
    text,
    /^apiserver_encryption_config_controller_automatic_reloads_total\{status="success",apiserver_id_hash="sha256:[0-9a-f]{64}"\} 1$/m,
  );
  assert.doesNotMatch(text, /apiserver_encryption_config_controller_automatic_reload_success_total/);
  assert.doesNotMatch(text, /apiserver_encryption_config_controller_automatic_reload_failures_total/);
  assert.doesNotMatch(text, /^# HELP apiserver_request_total /m);
  assert.match(text, /^# HELP apiserver_request_duration_seconds \[STABLE\] /m);
  assert.match(text, /^disabled_metrics_total 2$/m);
  assert.match(text, /^hidden_metrics_total 3$/m);
  assert.match(text, /^# HELP apiserver_validation_declarative_validation_mismatch_total \[BETA\] /m);
  assert.match(text, /^apiserver_validation_declarative_validation_mismatch_total 0$/m);
  assert.match(text, /^registered_metrics_total\{stability_level="STABLE",deprecated_version=""\} \d+$/m);
  assert.match(
    text,
    /^# HELP registered_metrics_total \[BETA\] The count of registered metrics broken by stability level and deprecation version\.$/m,
  );
});

test('--show-hidden-metrics-for-version shows the deprecated metrics, marked as deprecated', async () => {
  const m = new ApiserverMetrics();
  m.applyLifecycle({ release, showHidden: true, disabled: [] });
  const text = await exposed(m);
  assert.match(
    text,
    /^# HELP apiserver_encryption_config_controller_automatic_reload_success_total \[ALPHA\] \(Deprecated since 1\.30\.0\) /m,
  );
  assert.match(
    text,
    /^apiserver_encryption_config_controller_automatic_reload_success_total\{apiserver_id_hash="sha256:[0-9a-f]{64}"\} 1$/m,
  );
  assert.match(text, /^# TYPE apiserver_encryption_config_controller_automatic_reload_failures_total counter$/m);
  assert.match(text, /^hidden_metrics_total 0$/m);
  assert.match(text, /^registered_metrics_total\{stability_level="ALPHA",deprecated_version="1\.30\.0"\} 2$/m);
});
