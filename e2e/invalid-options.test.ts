// Issue 8, finding 5: options that parse but are not allowed are 422 Invalid about the options
// kind, for every verb, as kube-apiserver answers (client-go's IsInvalid() and kubectl's
// "The <kind> "" is invalid" depend on it). Nothing is written by a refused request.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createConfigMap,
  createNamespace,
  jsonOf,
  kubectl,
  startKapi,
  uniqueName,
  type HttpResponse,
  type KapiProcess,
} from './harness.js';

interface InvalidStatus {
  kind: string;
  message: string;
  reason: string;
  code: number;
  details: { group: string; kind: string; causes: { reason: string; message: string; field: string }[] };
}

function invalid(res: HttpResponse, optionsKind: string): InvalidStatus {
  assert.equal(res.status, 422, res.body);
  const s = jsonOf<InvalidStatus>(res);
  assert.equal(s.kind, 'Status');
  assert.equal(s.reason, 'Invalid');
  assert.equal(s.code, 422);
  assert.equal(s.details.group, 'meta.k8s.io');
  assert.equal(s.details.kind, optionsKind);
  assert.ok(s.message.startsWith(`${optionsKind}.meta.k8s.io "" is invalid: `), s.message);
  return s;
}

describe('invalid request options are 422 Invalid', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('options');
  const cms = () => `/api/v1/namespaces/${ns}/configmaps`;
  const body = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

  before(async () => {
    kapi = await startKapi();
    await createNamespace(kapi.http, ns);
    await createConfigMap(kapi.http, ns, 'keep', { a: '1' });
  });
  after(async () => {
    await kapi?.stop();
  });

  it('create: dryRun, fieldValidation and fieldManager (too long, control characters)', async () => {
    const dry = invalid(await kapi.http.post(`${cms()}?dryRun=Maybe`, body('n1')), 'CreateOptions');
    assert.equal(
      dry.message,
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Maybe"}: supported values: "All"',
    );
    assert.deepEqual(dry.details.causes, [
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: []string{"Maybe"}: supported values: "All"', field: 'dryRun' },
    ]);
    const validation = invalid(await kapi.http.post(`${cms()}?fieldValidation=Loose`, body('n2')), 'CreateOptions');
    assert.equal(
      validation.message,
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"',
    );
    const long = invalid(await kapi.http.post(`${cms()}?fieldManager=${'m'.repeat(129)}`, body('n3')), 'CreateOptions');
    assert.equal(long.message, 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes');
    const control = invalid(await kapi.http.post(`${cms()}?fieldManager=a%07b`, body('n4')), 'CreateOptions');
    assert.equal(
      control.message,
      'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\ab": invalid character U+0007 (at position 1)',
    );
  });

  it('update and patch: UpdateOptions and PatchOptions; apply without a fieldManager', async () => {
    const current = jsonOf<Record<string, unknown>>(await kapi.http.get(`${cms()}/keep`));
    invalid(await kapi.http.put(`${cms()}/keep?dryRun=Sometimes`, current), 'UpdateOptions');
    const patch = invalid(await kapi.http.patch(`${cms()}/keep?fieldValidation=strict`, { data: { b: '2' } }), 'PatchOptions');
    assert.equal(patch.details.causes[0].field, 'fieldValidation');
    const apply = invalid(
      await kapi.http.patch(`${cms()}/keep`, JSON.stringify(body('keep')), 'application/apply-patch+yaml'),
      'PatchOptions',
    );
    assert.equal(apply.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const force = invalid(await kapi.http.patch(`${cms()}/keep?force=true`, { data: { b: '2' } }), 'PatchOptions');
    assert.equal(force.message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  });

  it('delete and deletecollection: propagationPolicy and dryRun are DeleteOptions', async () => {
    const policy = invalid(await kapi.http.delete(`${cms()}/keep?propagationPolicy=Sometimes`), 'DeleteOptions');
    assert.equal(
      policy.message,
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
    invalid(await kapi.http.delete(`${cms()}/keep`, { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['Everything'] }), 'DeleteOptions');
    invalid(await kapi.http.delete(`${cms()}?dryRun=Nope`), 'DeleteOptions');
    // the list options of a deletecollection are checked first
    invalid(await kapi.http.delete(`${cms()}?resourceVersionMatch=Exact&dryRun=Nope`), 'ListOptions');
  });

  it('list and watch: resourceVersionMatch and sendInitialEvents are ListOptions', async () => {
    const exact = invalid(await kapi.http.get(`${cms()}?resourceVersionMatch=Exact`), 'ListOptions');
    assert.equal(
      exact.message,
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const initial = invalid(await kapi.http.get(`${cms()}?sendInitialEvents=true`), 'ListOptions');
    assert.equal(
      initial.message,
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
    );
    const watch = invalid(await kapi.http.get(`${cms()}?watch=1&resourceVersion=1&resourceVersionMatch=Exact`), 'ListOptions');
    assert.deepEqual(
      watch.details.causes.map((c) => [c.reason, c.field]),
      [
        ['FieldValueForbidden', 'resourceVersionMatch'],
        ['FieldValueNotSupported', 'resourceVersionMatch'],
      ],
    );
  });

  it('kubectl shows the refusal as an invalid request (client-go IsInvalid)', async () => {
    const manifest = JSON.stringify(body('by-kubectl'));
    const r = await kubectl(['create', '-n', ns, '-f', '-', `--field-manager=${'k'.repeat(129)}`], {
      kubeconfig: kapi.kubeconfig,
      input: manifest,
    });
    assert.notEqual(r.code, 0);
    // kubectl words a 422 this way only when the Status is Invalid with details
    assert.match(r.stderr, /The CreateOptions "" is invalid: fieldManager: Too long: may not be more than 128 bytes/, r.stderr);
  });

  it('nothing was written by a refused request', async () => {
    const names = jsonOf<{ items: { metadata: { name: string } }[] }>(await kapi.http.get(cms())).items.map((i) => i.metadata.name);
    // kube-root-ca.crt is the root CA publisher's, made for every namespace
    assert.deepEqual(
      names.filter((n) => n !== 'kube-root-ca.crt'),
      ['keep'],
    );
    const keep = jsonOf<{ data: Record<string, string> }>(await kapi.http.get(`${cms()}/keep`));
    assert.deepEqual(keep.data, { a: '1' });
  });
});
