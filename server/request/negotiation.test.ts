import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBody, negotiateInput, negotiateOutput, noConversions, parseAccept, resourceRestrictions } from './negotiation.js';
import type { StatusError } from '../machinery/status.js';

const withTable = resourceRestrictions(true);
const withoutTable = resourceRestrictions(false);

test('no Accept header means JSON', () => {
  const m = negotiateOutput(undefined, withTable);
  assert.equal(m.format, 'json');
  assert.equal(m.contentType, 'application/json');
  assert.equal(m.convert, undefined);
});

test('JSON, YAML and wildcards', () => {
  assert.equal(negotiateOutput('application/json', withTable).format, 'json');
  assert.equal(negotiateOutput('application/yaml', withTable).format, 'yaml');
  assert.equal(negotiateOutput('application/yaml', withTable).contentType, 'application/yaml');
  assert.equal(negotiateOutput('*/*', withTable).format, 'json');
  assert.equal(negotiateOutput('application/*', withTable).format, 'json');
  assert.equal(negotiateOutput('text/html, application/yaml;q=0.9, */*;q=0.8', withTable).format, 'yaml');
});

test('kubectl get asks for a Table with fallbacks', () => {
  const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  const m = negotiateOutput(accept, withTable);
  assert.deepEqual(m.convert, { kind: 'Table', group: 'meta.k8s.io', version: 'v1' });
  // without a table convertor the plain JSON fallback wins
  assert.equal(negotiateOutput(accept, withoutTable).convert, undefined);
  // errors never convert
  assert.equal(negotiateOutput(accept, noConversions).convert, undefined);
});

test('v1beta1 tables and metadata-only forms', () => {
  assert.deepEqual(negotiateOutput('application/json;as=Table;g=meta.k8s.io;v=v1beta1', withTable).convert, {
    kind: 'Table',
    group: 'meta.k8s.io',
    version: 'v1beta1',
  });
  assert.equal(
    negotiateOutput('application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', withoutTable).convert?.kind,
    'PartialObjectMetadataList',
  );
  // an unknown group for the conversion does not match
  assert.throws(
    () => negotiateOutput('application/json;as=Table;g=example.com;v=v1', withTable),
    (e: StatusError) => e.code === 406,
  );
});

test('protobuf is skipped when JSON is also acceptable, refused alone', () => {
  assert.equal(negotiateOutput('application/vnd.kubernetes.protobuf, application/json', withTable).format, 'json');
  assert.equal(
    negotiateOutput('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json', withTable).format,
    'json',
  );
  assert.throws(
    () => negotiateOutput('application/vnd.kubernetes.protobuf', withTable),
    (e: StatusError) =>
      e.code === 406 &&
      e.reason === 'NotAcceptable' &&
      e.message === 'only the following media types are accepted: application/json, application/yaml',
  );
});

test('protobuf for endpoints of built-in kinds: objects, metadata-only forms and watches, never Table', () => {
  const builtIn = resourceRestrictions(true, true);
  const m = negotiateOutput('application/vnd.kubernetes.protobuf, application/json', builtIn);
  assert.equal(m.format, 'protobuf');
  assert.equal(m.contentType, 'application/vnd.kubernetes.protobuf');
  assert.equal(
    negotiateOutput('application/vnd.kubernetes.protobuf, application/json', builtIn, true).contentType,
    'application/vnd.kubernetes.protobuf;stream=watch',
  );
  assert.equal(negotiateOutput('application/json, application/vnd.kubernetes.protobuf', builtIn).format, 'json');
  assert.equal(negotiateOutput('*/*', builtIn).format, 'json');
  const table = negotiateOutput(
    'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io',
    builtIn,
  );
  assert.equal(table.format, 'json');
  assert.equal(table.convert?.kind, 'Table');
  const meta = negotiateOutput(
    'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
    builtIn,
  );
  assert.equal(meta.format, 'protobuf');
  assert.equal(meta.convert?.kind, 'PartialObjectMetadataList');
  assert.throws(
    () => negotiateOutput('text/plain', builtIn),
    (e: StatusError) =>
      e.message === 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
  );
});

test('watch streams only JSON', () => {
  assert.equal(negotiateOutput('application/json', withTable, true).format, 'json');
  assert.equal(negotiateOutput('application/json;stream=watch', withTable, true).format, 'json');
  assert.throws(
    () => negotiateOutput('application/yaml', withTable, true),
    (e: StatusError) => e.code === 406,
  );
  // a stream parameter on a non-watch request does not match
  assert.throws(
    () => negotiateOutput('application/json;stream=watch', withTable, false),
    (e: StatusError) => e.code === 406,
  );
});

test('pretty=1 media parameter', () => {
  assert.equal(negotiateOutput('application/json;pretty=1', withTable).pretty, true);
});

test('q values order the clauses; concrete before wildcard', () => {
  const clauses = parseAccept('*/*;q=0.5, application/yaml, application/*');
  assert.deepEqual(
    clauses.map((c) => `${c.type}/${c.subtype}`),
    ['application/yaml', 'application/*', '*/*'],
  );
});

test('request bodies by Content-Type', () => {
  assert.equal(negotiateInput(undefined), 'json');
  assert.equal(negotiateInput('application/json; charset=utf-8'), 'json');
  assert.equal(negotiateInput('application/yaml'), 'yaml');
  assert.equal(negotiateInput('application/vnd.kubernetes.protobuf'), 'protobuf');
  assert.throws(
    () => negotiateInput('text/plain'),
    (e: StatusError) => e.code === 415 && /unknown format/.test(e.message),
  );
});

test('bodies decode as JSON or YAML; malformed ones are 400', () => {
  assert.deepEqual(decodeBody(Buffer.from('{"a":1}'), 'json'), { a: 1 });
  assert.deepEqual(decodeBody(Buffer.from('a: 1\nb: [x, z]\n'), 'yaml'), { a: 1, b: ['x', 'z'] });
  assert.throws(
    () => decodeBody(Buffer.from('{"a":'), 'json'),
    (e: StatusError) => e.code === 400,
  );
  assert.throws(
    () => decodeBody(Buffer.from('a: [1,\n'), 'yaml'),
    (e: StatusError) => e.code === 400,
  );
});

test('YAML alias bombs are refused', () => {
  const bomb = [
    'a: &a ["x","x","x","x","x","x","x","x","x"]',
    'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
    'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
    'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
  ].join('\n');
  assert.throws(
    () => decodeBody(Buffer.from(bomb), 'yaml'),
    (e: StatusError) => e.code === 400,
  );
});
