import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FeatureGates } from './gates.js';

test("defaults are kube-apiserver 1.33's", () => {
  const g = FeatureGates.defaults();
  assert.equal(g.enabled('CBORServingAndStorage'), false);
  assert.equal(g.enabled('WatchList'), true);
  assert.equal(g.enabled('APIResponseCompression'), true);
  assert.equal(g.enabled('DeclarativeValidation'), true);
  assert.equal(g.enabled('DeclarativeValidationTakeover'), false);
  assert.throws(() => g.enabled('NotAGate'), /not a kube-apiserver 1.33 gate/);
});

test("unknown, malformed and locked gates are refused with kube's messages", () => {
  assert.throws(() => FeatureGates.parse(['Bogus=true']), { message: 'unrecognized feature gate: Bogus' });
  assert.throws(() => FeatureGates.parse(['WatchList']), { message: 'missing bool value for WatchList' });
  assert.throws(() => FeatureGates.parse(['RetryGenerateName=false']), {
    message: 'cannot set feature gate RetryGenerateName to false, feature is locked to true',
  });
  assert.throws(() => FeatureGates.parse(['RetryGenerateName=false,BtreeWatchCache=false']), {
    message:
      '[cannot set feature gate RetryGenerateName to false, feature is locked to true, cannot set feature gate BtreeWatchCache to false, feature is locked to true]',
  });
  assert.throws(() => FeatureGates.parse(['wardle:A=true']), { message: 'component not registered: wardle' });
  assert.throws(() => FeatureGates.parse(['kube:WatchList=true', 'APIResponseCompression=true']), {
    message: 'set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use',
  });
  // setting a locked gate to its own value is allowed, with the GA warning
  assert.deepEqual(FeatureGates.parse(['RetryGenerateName=true']).warnings, [
    'Setting GA feature gate RetryGenerateName=true. It will be removed in a future release.',
  ]);
});

test('deprecated gates warn; later values win; kube: prefix accepted', () => {
  const { gates, warnings } = FeatureGates.parse(['kube:KMSv1=true,kube:WatchList=true', 'kube:WatchList=false']);
  assert.equal(gates.enabled('KMSv1'), true);
  assert.equal(gates.enabled('WatchList'), false);
  assert.deepEqual(warnings, ['Setting deprecated feature gate KMSv1=true. It will be removed in a future release.']);
});

test('AllAlpha and AllBeta set the gates of their stage the flag leaves unset', () => {
  const { gates } = FeatureGates.parse(['AllAlpha=true,MutatingAdmissionPolicy=false']);
  assert.equal(gates.enabled('CBORServingAndStorage'), true);
  assert.equal(gates.enabled('MutatingAdmissionPolicy'), false);
  assert.equal(gates.enabled('WatchList'), true);
  const beta = FeatureGates.parse(['AllBeta=false']).gates;
  assert.equal(beta.enabled('WatchList'), false);
  assert.equal(beta.enabled('RetryGenerateName'), true);
});
