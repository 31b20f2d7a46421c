// The checks an AdmissionReview answer must pass, with kube's messages.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reviewVersion, verifyResponse, UnsupportedPatchType } from './review.js';

const v1 = (response: Record<string, unknown> | undefined, apiVersion = 'admission.k8s.io/v1', kind = 'AdmissionReview') => ({
  apiVersion,
  kind,
  response,
});
const patch = Buffer.from(JSON.stringify([{ op: 'add', path: '/x', value: 1 }])).toString('base64');

test('the AdmissionReview version: the first of the list kapi knows', () => {
  assert.equal(reviewVersion(['v2', 'v1beta1', 'v1']), 'v1beta1');
  assert.equal(reviewVersion(['v1', 'v1beta1']), 'v1');
  assert.equal(reviewVersion(['v3']), undefined);
});

test('v1: response, uid, kind and patch rules', () => {
  assert.throws(() => verifyResponse('v1', 'u', v1(undefined), false), { message: 'webhook response was absent' });
  assert.throws(() => verifyResponse('v1', 'u', v1({ uid: 'x' }), false), { message: 'expected response.uid="u", got "x"' });
  assert.throws(() => verifyResponse('v1', 'u', v1({ uid: 'u' }, 'v1', 'Pod'), false), {
    message: 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /v1, Kind=Pod',
  });
  assert.throws(() => verifyResponse('v1', 'u', v1({ uid: 'u', patch }), true), {
    message: 'webhook returned response.patch but not response.patchType',
  });
  assert.throws(() => verifyResponse('v1', 'u', v1({ uid: 'u', patchType: 'JSONPatch' }), true), {
    message: 'webhook returned response.patchType but not response.patch',
  });
  assert.throws(() => verifyResponse('v1', 'u', v1({ uid: 'u', patch }), false), {
    message: 'validating webhook may not return response.patch',
  });
  assert.throws(() => verifyResponse('v1', 'u', v1({ uid: 'u', patch, patchType: 'MergePatch' }), true), UnsupportedPatchType);
  const ok = verifyResponse(
    'v1',
    'u',
    v1({ uid: 'u', allowed: true, patch, patchType: 'JSONPatch', warnings: ['w'], auditAnnotations: { k: 'v' } }),
    true,
  );
  assert.deepEqual(ok, { allowed: true, warnings: ['w'], auditAnnotations: { k: 'v' }, patch: [{ op: 'add', path: '/x', value: 1 }] });
});

test('v1beta1: no uid or kind check, a patch is JSONPatch without saying so', () => {
  const r = verifyResponse('v1beta1', 'u', { response: { allowed: true, patch } }, true);
  assert.deepEqual(r.patch, [{ op: 'add', path: '/x', value: 1 }]);
  assert.equal(verifyResponse('v1beta1', 'u', { response: { allowed: false, status: { message: 'no' } } }, false).result?.message, 'no');
});
