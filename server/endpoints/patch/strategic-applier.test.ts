import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import type { GroupVersionKind, ResourceInfo } from '../../apis/types.js';
import { StatusError } from '../../machinery/status.js';
import type { RequestContext } from '../../registry/rest.js';
import { MemoryResource, resourceInfo } from '../testing/memory-resource.js';
import { STRATEGIC_MERGE_PATCH_TYPE } from './appliers.js';
import { createStrategicMergePatchApplier, strategicPatchTypes } from './strategic-applier.js';
import type { PatchTarget } from './types.js';

const applier = createStrategicMergePatchApplier();

const deployments = resourceInfo({
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  kind: 'Deployment',
  definition: 'io.k8s.api.apps.v1.Deployment',
});

function target(info: ResourceInfo, fieldValidation: RequestContext['fieldValidation'] = 'Warn', kind?: GroupVersionKind): PatchTarget {
  return {
    resource: new MemoryResource(info),
    ctx: { user: { username: 'admin', groups: [] }, namespace: 'ns', dryRun: false, fieldValidation, warnings: [] },
    name: 'web',
    namespace: 'ns',
    kind: kind ?? { group: info.group, version: info.version, kind: info.kind },
    fieldManager: 'test',
    force: false,
  };
}

function liveDeployment(): KubeObject {
  return {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' } },
    spec: {
      replicas: 1,
      template: {
        metadata: { creationTimestamp: null, labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'c', image: 'nginx:1', env: [{ name: 'A', value: '1' }] },
            { name: 's', image: 'busybox:1' },
          ],
        },
      },
    },
  } as KubeObject;
}

async function statusOf(fn: () => unknown): Promise<StatusError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof StatusError, `a StatusError, got ${String(err)}`);
    return err;
  }
  assert.fail('no error');
}

const body = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

describe('strategic merge patch applier', () => {
  test('is registered under its media type, not as apply', () => {
    const types = strategicPatchTypes();
    assert.deepEqual([...types.keys()], [STRATEGIC_MERGE_PATCH_TYPE]);
    const a = types.get(STRATEGIC_MERGE_PATCH_TYPE);
    assert.equal(a?.isApply, false);
    assert.equal(a?.createsMissing, false);
  });

  test('patches a Deployment by the schema: containers merge by name, type meta stays', async () => {
    const patch = applier.parse(
      body({ apiVersion: 'apps/v1beta1', spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }),
    );
    const out = await applier.apply(liveDeployment(), patch, target(deployments));
    assert.equal(out.kind, 'Deployment');
    assert.equal(out.apiVersion, 'apps/v1');
    assert.deepEqual(Object.keys(out).slice(0, 3), ['kind', 'apiVersion', 'metadata']);
    const spec = out.spec as { template: { metadata: unknown; spec: { containers: { name: string; image: string; env?: unknown }[] } } };
    assert.deepEqual(
      spec.template.spec.containers.map((c) => [c.name, c.image]),
      [
        ['c', 'nginx:2'],
        ['s', 'busybox:1'],
      ],
    );
    assert.deepEqual(spec.template.spec.containers[0]?.env, [{ name: 'A', value: '1' }]);
    assert.deepEqual(spec.template.metadata, { creationTimestamp: null, labels: { app: 'web' } });
  });

  test('the parsed patch is reused unchanged when the registry applies it again', async () => {
    const patch = applier.parse(
      body({
        spec: {
          template: {
            spec: { '$setElementOrder/containers': [{ name: 's' }, { name: 'c' }], containers: [{ name: 's', $patch: 'delete' }] },
          },
        },
      }),
    );
    const first = await applier.apply(liveDeployment(), patch, target(deployments));
    const second = await applier.apply(liveDeployment(), patch, target(deployments));
    assert.deepEqual(second, first);
    const containers = (first.spec as { template: { spec: { containers: { name: string }[] } } }).template.spec.containers;
    assert.deepEqual(
      containers.map((c) => c.name),
      ['c'],
    );
  });

  test('a missing object is 404, even for a malformed patch (kube-apiserver decodes after reading)', async () => {
    const err = await statusOf(() => applier.apply(null, applier.parse(body('[1]')), target(deployments)));
    assert.equal(err.code, 404);
    assert.equal(err.message, 'deployments.apps "web" not found');
  });

  test('a resource that is not built-in is refused with 415, as for custom resources', async () => {
    const widgets = resourceInfo({
      group: 'example.com',
      version: 'v1',
      resource: 'widgets',
      kind: 'Widget',
      definition: 'com.example.v1.Widget',
    });
    const err = await statusOf(() => applier.apply({ metadata: { name: 'web' } } as KubeObject, applier.parse(body({})), target(widgets)));
    assert.equal(err.code, 415);
    assert.equal(err.reason, 'UnsupportedMediaType');
    assert.equal(
      err.message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  });

  test('a built-in resource whose kind has no schema merges maps and replaces lists', async () => {
    const odd = resourceInfo({
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      kind: 'Deployment',
      definition: 'io.k8s.api.apps.v1.Deployment',
    });
    const out = await applier.apply(
      { metadata: { name: 'web', labels: { a: '1' } }, items: [1, 2] } as unknown as KubeObject,
      applier.parse(body({ metadata: { labels: { b: '2' } }, items: [3] })),
      target(odd, 'Warn', { group: 'apps', version: 'v1', kind: 'Unlisted' }),
    );
    assert.deepEqual(out, { kind: 'Unlisted', apiVersion: 'apps/v1', metadata: { name: 'web', labels: { a: '1', b: '2' } }, items: [3] });
  });

  test('malformed bodies are 400; a null patch changes nothing', async () => {
    for (const [text, message] of [
      ['[1]', 'json: cannot unmarshal array into Go value of type map[string]interface {}'],
      ['"x"', 'json: cannot unmarshal string into Go value of type map[string]interface {}'],
      ['3', 'json: cannot unmarshal number into Go value of type map[string]interface {}'],
      ['', 'unexpected end of JSON input'],
    ] as const) {
      const err = await statusOf(() => applier.apply(liveDeployment(), applier.parse(body(text)), target(deployments)));
      assert.equal(err.code, 400, text);
      assert.equal(err.message, message);
    }
    const bad = await statusOf(() => applier.apply(liveDeployment(), applier.parse(body('{"a":')), target(deployments)));
    assert.equal(bad.code, 400);
    assert.deepEqual(await applier.apply(liveDeployment(), applier.parse(body('null')), target(deployments)), liveDeployment());
  });

  test('patch errors answer as kube-apiserver: 400, 422 and plain 500', async () => {
    const retain = await statusOf(() =>
      applier.apply(liveDeployment(), applier.parse(body({ spec: { $retainKeys: ['replicas'], paused: true } })), target(deployments)),
    );
    assert.equal(retain.code, 400);
    assert.equal(retain.message, 'invalid patch format of retainKeys');

    const withFinalizers = liveDeployment();
    withFinalizers.metadata.finalizers = [];
    const lists = await statusOf(() =>
      applier.apply(withFinalizers, applier.parse(body({ metadata: { finalizers: [['a']] } })), target(deployments)),
    );
    assert.equal(lists.code, 422);
    assert.equal(lists.reason, 'Invalid');
    assert.equal(lists.message, 'the server rejected our request due to an error in our request');

    const key = await statusOf(() =>
      applier.apply(
        liveDeployment(),
        applier.parse(body({ spec: { template: { spec: { containers: [{ image: 'x' }] } } } })),
        target(deployments),
      ),
    );
    assert.equal(key.code, 500);
    assert.equal(key.reason, '');
    assert.equal(key.message, 'map: map[image:x] does not contain declared merge key: name');
  });

  test('duplicate fields: a warning by default, 422 under Strict, nothing under Ignore', async () => {
    const text = '{"metadata":{"labels":{"a":"1","a":"2"}}}';
    const warn = target(deployments, 'Warn');
    const out = await applier.apply(liveDeployment(), applier.parse(body(text)), warn);
    assert.deepEqual(out.metadata.labels, { app: 'web', a: '2' });
    assert.deepEqual(warn.ctx.warnings, ['duplicate field "metadata.labels.a"']);

    const strict = await statusOf(() => applier.apply(liveDeployment(), applier.parse(body(text)), target(deployments, 'Strict')));
    assert.equal(strict.code, 422);
    assert.equal(
      strict.message,
      ' "" is invalid: patch: Invalid value: "map[metadata:map[labels:map[a:2]]]": strict decoding error: duplicate field "metadata.labels.a"',
    );
    assert.equal(strict.details?.causes?.[0]?.field, 'patch');

    const ignore = target(deployments, 'Ignore');
    await applier.apply(liveDeployment(), applier.parse(body(text)), ignore);
    assert.deepEqual(ignore.ctx.warnings, []);
  });

  test('metadata that is not an object is 422', async () => {
    const err = await statusOf(() => applier.apply(liveDeployment(), applier.parse(body({ metadata: 'x' })), target(deployments)));
    assert.equal(err.code, 422);
    assert.match(err.message, /^ "" is invalid: patch: Invalid value: "map\[metadata:x\]": /);
  });
});
