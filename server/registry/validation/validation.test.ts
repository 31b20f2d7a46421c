import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorBody, errorString, fieldErrors, goQuote, invalidError } from '../../machinery/validation/field-error.js';
import {
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSSubdomain,
  nameIsPathSegment,
} from '../../machinery/validation/names.js';
import { validateObjectMeta, validateObjectMetaUpdate, validateOwnerReferences } from './object-meta.js';

test('field errors render as kube-apiserver renders them', () => {
  assert.equal(errorString(fieldErrors.required('spec.containers')), 'spec.containers: Required value');
  assert.equal(
    errorString(fieldErrors.required('metadata.name', 'name or generateName is required')),
    'metadata.name: Required value: name or generateName is required',
  );
  assert.equal(
    errorString(fieldErrors.invalid('spec.replicas', -1, 'must be greater than or equal to 0')),
    'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
  );
  assert.equal(errorString(fieldErrors.invalid('a', 'x"y', 'bad')), 'a: Invalid value: "x\\"y": bad');
  assert.equal(
    errorString(fieldErrors.invalid('a', { rendered: '0x0' }, 'must be specified for an update')),
    'a: Invalid value: 0x0: must be specified for an update',
  );
  assert.equal(errorString(fieldErrors.invalid('f', ['a', 'b'], 'bad')), 'f: Invalid value: []string{"a", "b"}: bad');
  assert.equal(
    errorString(fieldErrors.invalid('m', { b: '2', a: '1' }, 'bad')),
    'm: Invalid value: map[string]string{"a":"1", "b":"2"}: bad',
  );
  assert.equal(errorString(fieldErrors.notSupported('t', 'X', ['A', 'B'])), 't: Unsupported value: "X": supported values: "A", "B"');
  assert.equal(errorString(fieldErrors.forbidden('f', 'not allowed')), 'f: Forbidden: not allowed');
  assert.equal(errorString(fieldErrors.tooLong('d', 10)), 'd: Too long: may not be more than 10 bytes');
  assert.equal(errorString(fieldErrors.duplicate('n', 'x')), 'n: Duplicate value: "x"');
  assert.equal(errorBody(fieldErrors.invalid('x', null, 'd')), 'Invalid value: null: d');
  assert.equal(goQuote('a\tb\u0001'), '"a\\tb\\x01"');
});

test('invalidError: one error inline, several in brackets, duplicates dropped', () => {
  const one = invalidError('apps', 'Deployment', 'd', [fieldErrors.required('spec.selector')]);
  assert.equal(one.code, 422);
  assert.equal(one.message, 'Deployment.apps "d" is invalid: spec.selector: Required value');
  const two = invalidError('', 'Pod', 'p', [fieldErrors.required('a'), fieldErrors.required('b'), fieldErrors.required('a')]);
  assert.equal(two.message, 'Pod "p" is invalid: [a: Required value, b: Required value]');
  assert.deepEqual(two.details?.causes, [
    { reason: 'FieldValueRequired', message: 'Required value', field: 'a' },
    { reason: 'FieldValueRequired', message: 'Required value', field: 'b' },
  ]);
});

test('name rules', () => {
  assert.deepEqual(isDNS1123Subdomain('a.b-c'), []);
  assert.equal(isDNS1123Subdomain('A').length, 1);
  assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
  assert.deepEqual(isDNS1123Label('x'.repeat(64)), ['must be no more than 63 characters']);
  assert.equal(isDNS1035Label('1a').length, 1);
  assert.deepEqual(isDNS1035Label('a1'), []);
  assert.deepEqual(nameIsDNSSubdomain('gen-', true), []);
  assert.deepEqual(nameIsPathSegment('system:controller:x', false), []);
  assert.deepEqual(nameIsPathSegment('..', false), ["may not be '..'"]);
  assert.deepEqual(nameIsPathSegment('a/b%', false), ["may not contain '/'", "may not contain '%'"]);
  assert.deepEqual(isQualifiedName('example.com/Name_1'), []);
  assert.deepEqual(isQualifiedName('/x'), ['prefix part must be non-empty']);
  assert.equal(isQualifiedName('a/b/c').length, 1);
  assert.deepEqual(isValidLabelValue(''), []);
  assert.equal(isValidLabelValue('-a').length, 1);
  assert.deepEqual(isConfigMapKey('..x'), ["must not start with '..'"]);
});

test('object metadata on create', () => {
  const errs = validateObjectMeta(
    { name: 'ok', namespace: '', labels: { 'a/b/c': 'x' }, finalizers: ['orphan', 'foregroundDeletion'] },
    true,
    nameIsDNSSubdomain,
  );
  assert.deepEqual(
    errs.map((e) => e.field),
    ['metadata.namespace', 'metadata.labels', 'metadata.finalizers'],
  );
  assert.equal(
    errorString(errs[2]),
    'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
  );
  const cluster = validateObjectMeta({ name: 'n', namespace: 'x' }, false, nameIsDNSSubdomain);
  assert.equal(errorString(cluster[0]), 'metadata.namespace: Forbidden: not allowed on this type');
});

test('owner references', () => {
  const errs = validateOwnerReferences(
    [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: '2', controller: true },
      { apiVersion: '', kind: '', name: '', uid: '' },
    ],
    'metadata.ownerReferences',
  );
  assert.deepEqual(errs.map(errorString).slice(1), [
    'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
    'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
    'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
    'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
  ]);
  assert.match(
    errorString(errs[0]),
    /Only one reference can have Controller set to true\. Found "true" in references for ReplicaSet\/a and ReplicaSet\/b$/,
  );
});

test('object metadata on update: immutable fields and finalizers while deleting', () => {
  const old = {
    name: 'a',
    uid: 'u',
    resourceVersion: '5',
    creationTimestamp: '2024-01-01T00:00:00Z',
    deletionTimestamp: '2024-01-02T00:00:00Z',
    finalizers: ['x.io/a'],
  };
  const errs = validateObjectMetaUpdate({ ...old, uid: 'v', finalizers: ['x.io/a', 'x.io/b'] }, old);
  assert.deepEqual(errs.map(errorString), [
    'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"x.io/b"}',
    'metadata.uid: Invalid value: "v": field is immutable',
  ]);
});
