import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readGeneratedJson } from './assets.js';
import { loadSchemas } from './schema.js';

const schemas = loadSchemas();

test('every definition of the 1.33 document is there, without prose', () => {
  assert.equal(schemas.names().length, 707);
  // only the compact structural vocabulary, at every level (property names are the only free keys)
  const vocabulary = new Set(['ref', 't', 'f', 'p', 'r', 'i', 'ap', 'gvk', 'lt', 'lk', 'mt', 'pmk', 'ps', 'ios', 'puf', 'er', 'un']);
  const check = (node: Record<string, unknown>, where: string): void => {
    for (const [key, value] of Object.entries(node)) {
      assert.ok(vocabulary.has(key), `${where}: unexpected key ${key}`);
      if (typeof value === 'string') assert.ok(!/\s/.test(value), `${where}.${key} holds text: ${value}`);
    }
    for (const [name, child] of Object.entries((node.p ?? {}) as Record<string, Record<string, unknown>>)) check(child, `${where}.${name}`);
    if (node.i) check(node.i as Record<string, unknown>, `${where}[]`);
    if (node.ap && typeof node.ap === 'object') check(node.ap as Record<string, unknown>, `${where}{}`);
  };
  for (const [name, node] of Object.entries(readGeneratedJson('schemas.json') as Record<string, Record<string, unknown>>))
    check(node, name);
});

test("schemaFor finds a kind's definition; meta types spanning many kinds are not resources", () => {
  const deployment = schemas.schemaFor('apps', 'v1', 'Deployment');
  assert.ok(deployment);
  assert.equal(deployment.type, 'object');
  assert.deepEqual(deployment.gvk, [{ group: 'apps', version: 'v1', kind: 'Deployment' }]);
  assert.equal(deployment.properties?.spec?.ref, 'io.k8s.api.apps.v1.DeploymentSpec');
  assert.equal(schemas.definitionNameFor('', 'v1', 'Pod'), 'io.k8s.api.core.v1.Pod');
  assert.equal(schemas.definitionNameFor('autoscaling', 'v1', 'Scale'), 'io.k8s.api.autoscaling.v1.Scale');
  assert.equal(schemas.definitionNameFor('', 'v1', 'DeleteOptions'), undefined);
  assert.equal(schemas.schemaFor('apps', 'v1beta1', 'Deployment'), undefined);
});

test('walking a Pod: list types, merge keys and patch strategies', () => {
  const pod = schemas.schemaFor('', 'v1', 'Pod');
  assert.ok(pod);
  const containers = schemas.at(pod, ['spec', 'containers']);
  assert.equal(containers?.type, 'array');
  assert.equal(containers?.listType, 'map');
  assert.deepEqual(containers?.listMapKeys, ['name']);
  assert.equal(containers?.patchMergeKey, 'name');
  assert.equal(containers?.patchStrategy, 'merge');
  assert.deepEqual(schemas.at(pod, ['spec', 'containers', '*'])?.required, ['name']);
  const ports = schemas.at(pod, ['spec', 'containers', '*', 'ports']);
  assert.equal(ports?.patchMergeKey, 'containerPort');
  assert.deepEqual(ports?.listMapKeys, ['containerPort', 'protocol']);
  assert.equal(schemas.at(pod, ['spec', 'containers', '*', 'ports', '*', 'containerPort'])?.format, 'int32');
  assert.equal(schemas.at(pod, ['metadata', 'finalizers'])?.patchStrategy, 'merge');
  assert.equal(schemas.at(pod, ['metadata', 'labels', '*'])?.type, 'string');
  assert.equal(schemas.at(pod, ['metadata', 'creationTimestamp'])?.format, 'date-time');
  assert.equal(schemas.at(pod, ['spec', 'nope']), undefined);
  // volumes use retainKeys alongside merge
  assert.equal(schemas.at(pod, ['spec', 'volumes'])?.patchStrategy, 'merge,retainKeys');
});

test('markers: int-or-string, map types, unions, granular maps', () => {
  const deployment = schemas.schemaFor('apps', 'v1', 'Deployment');
  assert.ok(deployment);
  const maxSurge = schemas.at(deployment, ['spec', 'strategy', 'rollingUpdate', 'maxSurge']);
  assert.equal(maxSurge?.intOrString, true);
  assert.equal(maxSurge?.format, 'int-or-string');
  assert.equal(schemas.at(deployment, ['spec', 'selector'])?.mapType, 'atomic');
  const seccomp = schemas.definition('io.k8s.api.core.v1.SeccompProfile');
  assert.deepEqual(seccomp?.unions, [{ discriminator: 'type', 'fields-to-discriminateBy': { localhostProfile: 'LocalhostProfile' } }]);
  const rawExtension = schemas.definition('io.k8s.apimachinery.pkg.runtime.RawExtension');
  assert.deepEqual(rawExtension, { type: 'object' });
});

test('resolve follows refs; elements steps into arrays and maps; nodes are read-only', () => {
  const spec = schemas.definition('io.k8s.api.core.v1.PodSpec');
  assert.ok(spec);
  assert.equal(schemas.resolve({ ref: 'io.k8s.api.core.v1.PodSpec' }), spec);
  const nodeSelector = schemas.field(spec, 'nodeSelector');
  assert.equal(nodeSelector?.type, 'object');
  assert.equal(nodeSelector && schemas.elements(nodeSelector)?.type, 'string');
  assert.throws(() => {
    (spec as { type?: string }).type = 'string';
  }, TypeError);
});

test('closure collects every definition a kind reaches', () => {
  const closure = schemas.closure(['io.k8s.api.apps.v1.Deployment']);
  for (const name of [
    'io.k8s.api.apps.v1.Deployment',
    'io.k8s.api.apps.v1.DeploymentSpec',
    'io.k8s.api.core.v1.PodTemplateSpec',
    'io.k8s.api.core.v1.Container',
    'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
  ]) {
    assert.ok(closure.has(name), name);
  }
  assert.ok(!closure.has('io.k8s.api.core.v1.Service'));
});
