import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeFieldValue, parseFieldSelector, parseFieldSelectorOrBadRequest, FieldSelector } from './fields.js';
import { fieldLabelConverterFor, selectableFieldsFor } from './field-sets.js';
import { SelectorError } from './labels.js';
import { StatusError } from '../machinery/status.js';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof SelectorError);
    return e.message;
  }
  assert.fail('no error');
}

test('=, == and != with comma AND', () => {
  const s = parseFieldSelector('metadata.name=web,status.phase!=Failed');
  assert.equal(s.matches({ 'metadata.name': 'web', 'status.phase': 'Running' }), true);
  assert.equal(s.matches({ 'metadata.name': 'web', 'status.phase': 'Failed' }), false);
  assert.equal(parseFieldSelector('a==b').matches({ a: 'b' }), true);
  // a field the object does not offer reads as ''
  assert.equal(parseFieldSelector('spec.nodeName=').matches({}), true);
  assert.equal(parseFieldSelector('spec.nodeName!=').matches({}), false);
  assert.equal(parseFieldSelector('').empty(), true);
});

test('escaped values', () => {
  const s = parseFieldSelector('a=x\\,y\\=z\\\\,b=c');
  assert.deepEqual(
    s.requirements.map((r) => [r.field, r.value]),
    [
      ['a', 'x,y=z\\'],
      ['b', 'c'],
    ],
  );
  assert.equal(escapeFieldValue('x,y=z\\'), 'x\\,y\\=z\\\\');
  assert.equal(message(() => parseFieldSelector('a=b\\c')), 'invalid field selector: invalid escape sequence: \\c');
  assert.equal(message(() => parseFieldSelector('a=b=c')), 'invalid field selector: unescaped character in value: 61');
  assert.equal(message(() => parseFieldSelector('a=b\\')), 'invalid field selector: invalid escape sequence: \\');
});

test('a term without an operator is rejected', () => {
  assert.equal(message(() => parseFieldSelector('a=b,cd')), "invalid selector: 'a=b,cd'; can't understand 'cd'");
});

test('requiresExactMatch finds the single name or namespace', () => {
  const s = parseFieldSelector('metadata.namespace=ns,metadata.name=x');
  assert.equal(s.requiresExactMatch('metadata.name'), 'x');
  assert.equal(s.requiresExactMatch('metadata.namespace'), 'ns');
  assert.equal(parseFieldSelector('metadata.name!=x').requiresExactMatch('metadata.name'), undefined);
});

test('400 form', () => {
  assert.equal(parseFieldSelectorOrBadRequest(undefined), FieldSelector.everything);
  assert.throws(() => parseFieldSelectorOrBadRequest('nope'), (e) => e instanceof StatusError && e.code === 400);
});

test('per-kind field labels: supported, renamed, rejected', () => {
  const pod = fieldLabelConverterFor('', 'v1', 'Pod');
  assert.deepEqual(pod('spec.nodeName', 'n1'), ['spec.nodeName', 'n1']);
  assert.deepEqual(pod('spec.host', 'n1'), ['spec.nodeName', 'n1']);
  assert.equal(message(() => pod('spec.bogus', 'x')), 'field label not supported: spec.bogus');
  const cm = fieldLabelConverterFor('', 'v1', 'ConfigMap');
  assert.deepEqual(cm('metadata.namespace', 'a'), ['metadata.namespace', 'a']);
  assert.equal(message(() => cm('data.x', 'a')), '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"');
  const node = fieldLabelConverterFor('', 'v1', 'Node');
  assert.equal(message(() => node('metadata.namespace', '')), 'field label not supported: metadata.namespace');
  const job = fieldLabelConverterFor('batch', 'v1', 'Job');
  assert.equal(message(() => job('spec.x', '')), 'field label "spec.x" not supported for "Job"');
  const ev = fieldLabelConverterFor('events.k8s.io', 'v1', 'Event');
  assert.deepEqual(ev('regarding.name', 'p'), ['involvedObject.name', 'p']);
  assert.deepEqual(ev('reportingController', 'c'), ['reportingComponent', 'c']);
  assert.equal(message(() => ev('involvedObject.name', 'p')), 'field label not supported: involvedObject.name');
});

test('selectable fields of stored objects', () => {
  const podFields = selectableFieldsFor('', 'pods', true)({
    metadata: { name: 'p', namespace: 'ns' },
    spec: { nodeName: 'n1', restartPolicy: 'Always', hostNetwork: true },
    status: { phase: 'Running', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] },
  });
  assert.equal(podFields['metadata.name'], 'p');
  assert.equal(podFields['metadata.namespace'], 'ns');
  assert.equal(podFields['spec.hostNetwork'], 'true');
  assert.equal(podFields['status.podIP'], '10.0.0.1');
  const sel = parseFieldSelector('spec.nodeName=n1,status.phase=Running');
  assert.equal(sel.matches(podFields), true);
  const ns = selectableFieldsFor('', 'namespaces', false)({ metadata: { name: 'a' }, status: { phase: 'Active' } });
  assert.deepEqual(ns, { 'metadata.name': 'a', 'status.phase': 'Active' });
  const job = selectableFieldsFor('batch', 'jobs', true)({ metadata: { name: 'j', namespace: 'd' }, status: { succeeded: 2 } });
  assert.equal(job['status.successful'], '2');
});
