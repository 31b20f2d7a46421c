import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSchemas } from '../../../apis/schema.js';
import { TypeModel } from '../../../fieldmanager/schema.js';
import type { KubeObject } from '../../../../storage/interface.js';
import { activation } from '../../../cel/admission-policy.js';
import { compileMutatingPolicy } from './compiled.js';
import { applyConfigurationMutation, applyJsonPatchMutation, MutationError } from './patchers.js';

const pod = (): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', labels: { app: 'x' } },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  }) as unknown as KubeObject;

function run(expression: string, patchType: 'JSONPatch' | 'ApplyConfiguration', object: KubeObject): unknown {
  const policy = compileMutatingPolicy({
    metadata: { name: 'p' },
    spec: {
      mutations: [patchType === 'JSONPatch' ? { patchType, jsonPatch: { expression } } : { patchType, applyConfiguration: { expression } }],
    },
  });
  const program = policy.mutations[0]!.program;
  assert.equal(program.compileError, undefined);
  const r = program.evaluate(activation({ object, oldObject: null, request: {}, params: null, namespaceObject: null }));
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
}

const podType = () => new TypeModel(loadSchemas()).typeOfKind('', 'v1', 'Pod')!;

test('JSONPatch: operations built with JSONPatch{...} and jsonpatch.escapeKey', () => {
  const value = run(
    '[JSONPatch{op: "add", path: "/metadata/annotations", value: {}}, JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/by"), value: object.metadata.name}]',
    'JSONPatch',
    pod(),
  );
  const out = applyJsonPatchMutation(pod(), value);
  assert.deepEqual(out.metadata.annotations, { 'example.com/by': 'p' });
});

test('JSONPatch: a failed test leaves the object as it was; a bad op is an error', () => {
  const unchanged = applyJsonPatchMutation(
    pod(),
    run(
      '[JSONPatch{op: "test", path: "/metadata/name", value: "other"}, JSONPatch{op: "remove", path: "/metadata/labels"}]',
      'JSONPatch',
      pod(),
    ),
  );
  assert.deepEqual(unchanged.metadata.labels, { app: 'x' });
  assert.throws(() => applyJsonPatchMutation(pod(), run('[JSONPatch{op: "remove", path: "/nope"}]', 'JSONPatch', pod())), MutationError);
  assert.throws(() => applyJsonPatchMutation(pod(), run('[{"op": "add"}]', 'JSONPatch', pod())), /should evaluate to array of JSONPatch/);
});

test('ApplyConfiguration: maps merge, keyed lists merge by key', () => {
  const value = run(
    'Object{metadata: Object.metadata{labels: {"added": "yes"}}, spec: Object.spec{containers: [Object.spec.containers{name: "c", imagePullPolicy: "Always"}, Object.spec.containers{name: "d", image: "busybox"}]}}',
    'ApplyConfiguration',
    pod(),
  );
  const out = applyConfigurationMutation(pod(), value, podType()) as unknown as {
    metadata: { labels: Record<string, string> };
    spec: { containers: Record<string, string>[] };
  };
  assert.deepEqual(out.metadata.labels, { app: 'x', added: 'yes' });
  assert.deepEqual(out.spec.containers, [
    { name: 'c', image: 'nginx', imagePullPolicy: 'Always' },
    { name: 'd', image: 'busybox' },
  ]);
});

test('ApplyConfiguration: atomic fields may not be set; type names must follow the fields', () => {
  const atomic = run(
    'Object{spec: Object.spec{containers: [Object.spec.containers{name: "c", command: ["sh"]}]}}',
    'ApplyConfiguration',
    pod(),
  );
  assert.throws(
    () => applyConfigurationMutation(pod(), atomic, podType()),
    /may not mutate atomic arrays, maps or structs: \.spec\.containers\[0\]\.command/,
  );
  const misnamed = run('Object{spec: Object.metadata{}}', 'ApplyConfiguration', pod());
  assert.throws(() => applyConfigurationMutation(pod(), misnamed, podType()), /type mismatch/);
  assert.throws(
    () => applyConfigurationMutation(pod(), run('{"a": 1}', 'ApplyConfiguration', pod()), podType()),
    /unsupported return type/,
  );
});
