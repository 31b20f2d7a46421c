import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSchemas } from '../../apis/schema.js';
import type { Json } from '../../machinery/json-patch.js';
import { applyStrategicMergePatch, StrategicMergePatchError } from './strategic-merge.js';
import type { JsonObject } from './strategic-go.js';
import { patchSchemaOf, unknownPatchSchema, type PatchSchema } from './strategic-schema.js';

const schemas = loadSchemas();

function schemaOf(group: string, version: string, kind: string): PatchSchema {
  const node = schemas.schemaFor(group, version, kind);
  assert.ok(node, `${group}/${version}/${kind} has a schema`);
  return patchSchemaOf(schemas, node);
}

const deployment = schemaOf('apps', 'v1', 'Deployment');
const pod = schemaOf('', 'v1', 'Pod');
const service = schemaOf('', 'v1', 'Service');

/** applies to copies, so vectors stay readable */
function smp(schema: PatchSchema, original: Json, patch: Json): JsonObject {
  return applyStrategicMergePatch(structuredClone(original) as JsonObject, structuredClone(patch) as JsonObject, schema);
}

function smpError(schema: PatchSchema, original: Json, patch: Json): StrategicMergePatchError {
  try {
    smp(schema, original, patch);
  } catch (err) {
    assert.ok(err instanceof StrategicMergePatchError, `a StrategicMergePatchError, got ${String(err)}`);
    return err;
  }
  assert.fail('the patch applied');
}

const podWith = (spec: Json): Json => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });
const specOf = (obj: JsonObject): JsonObject => obj.spec as JsonObject;

describe('maps and nulls', () => {
  test('objects merge, scalars replace, null deletes, absent nulls are ignored', () => {
    const out = smp(
      pod,
      { metadata: { name: 'p', labels: { a: '1', b: '2' } }, spec: { nodeName: 'n1', hostname: 'h' } },
      { metadata: { labels: { b: null, c: '3', ghost: null } }, spec: { nodeName: 'n2', hostname: null } },
    );
    assert.deepEqual(out, { metadata: { name: 'p', labels: { a: '1', c: '3' } }, spec: { nodeName: 'n2' } });
  });

  test('nulls inside a new value are dropped; a value of another type replaces', () => {
    const out = smp(
      pod,
      { spec: { nodeSelector: 'not-a-map', securityContext: null } },
      { spec: { nodeSelector: { zone: 'a', gone: null }, securityContext: { runAsUser: 1, fsGroup: null } } },
    );
    assert.deepEqual(out, { spec: { nodeSelector: { zone: 'a' }, securityContext: { runAsUser: 1 } } });
  });

  test('$patch: replace on a map replaces it, $patch: delete empties it', () => {
    const original = { metadata: { labels: { a: '1', b: '2' }, annotations: { x: 'y' } } };
    assert.deepEqual(smp(pod, original, { metadata: { labels: { $patch: 'replace', c: '3' } } }), {
      metadata: { labels: { c: '3' }, annotations: { x: 'y' } },
    });
    assert.deepEqual(smp(pod, original, { metadata: { annotations: { $patch: 'delete' } } }), {
      metadata: { labels: { a: '1', b: '2' }, annotations: {} },
    });
  });

  test('a new map carrying a directive is not added', () => {
    assert.deepEqual(smp(pod, { metadata: {} }, { metadata: { labels: { $patch: 'delete' } } }), { metadata: {} });
  });

  test('$patch: merge in a map is an unknown patch type', () => {
    const err = smpError(pod, { metadata: { labels: { a: '1' } } }, { metadata: { labels: { $patch: 'merge', b: '2' } } });
    assert.equal(err.errorClass, 'Internal');
    assert.equal(err.message, 'unknown patch type: merge in map: map[$patch:merge b:2]');
  });

  test('objects follow the live order, new keys come after', () => {
    const out = smp(
      pod,
      { metadata: { name: 'p', labels: { a: '1' } }, spec: {} },
      { spec: { hostname: 'h' }, metadata: { namespace: 'ns' } },
    );
    assert.deepEqual(Object.keys(out), ['metadata', 'spec']);
    assert.deepEqual(Object.keys(out.metadata as JsonObject), ['name', 'labels', 'namespace']);
  });
});

describe('lists merged by key', () => {
  const live = podWith({
    containers: [
      {
        name: 'app',
        image: 'nginx:1',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        ports: [
          { containerPort: 80, protocol: 'TCP' },
          { containerPort: 443, protocol: 'TCP' },
        ],
      },
      { name: 'sidecar', image: 'busybox:1' },
    ],
  });

  test('containers merge by name: only the named container changes', () => {
    const out = smp(pod, live, { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } });
    const containers = specOf(out).containers as JsonObject[];
    assert.deepEqual(
      containers.map((c) => [c.name, c.image]),
      [
        ['app', 'nginx:2'],
        ['sidecar', 'busybox:1'],
      ],
    );
    assert.deepEqual(containers[0]?.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
  });

  test('env merges by name, ports by containerPort', () => {
    const out = smp(pod, live, {
      spec: {
        containers: [
          {
            name: 'app',
            env: [
              { name: 'B', value: 'two' },
              { name: 'C', value: '3' },
            ],
            ports: [{ containerPort: 443, name: 'https' }],
          },
        ],
      },
    });
    const app = (specOf(out).containers as JsonObject[])[0] as JsonObject;
    // a live item the patch does not name stays before the patch's items it preceded
    assert.deepEqual(app.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: 'two' },
      { name: 'C', value: '3' },
    ]);
    assert.deepEqual(app.ports, [
      { containerPort: 80, protocol: 'TCP' },
      { containerPort: 443, protocol: 'TCP', name: 'https' },
    ]);
  });

  test('a new container comes first unless $setElementOrder says otherwise', () => {
    const added = smp(pod, live, { spec: { containers: [{ name: 'new', image: 'x' }] } });
    assert.deepEqual(
      (specOf(added).containers as JsonObject[]).map((c) => c.name),
      ['new', 'app', 'sidecar'],
    );
    const ordered = smp(pod, live, {
      spec: {
        '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }, { name: 'new' }],
        containers: [{ name: 'new', image: 'x' }],
      },
    });
    assert.deepEqual(
      (specOf(ordered).containers as JsonObject[]).map((c) => c.name),
      ['app', 'sidecar', 'new'],
    );
  });

  test('$setElementOrder reorders without changing items', () => {
    const out = smp(pod, live, {
      spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] },
    });
    const containers = specOf(out).containers as JsonObject[];
    assert.deepEqual(
      containers.map((c) => c.name),
      ['sidecar', 'app'],
    );
    assert.equal(containers[1]?.image, 'nginx:1');
  });

  test('$setElementOrder: a live-only item goes before the first ordered item it preceded live', () => {
    const out = smp(pod, podWith({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'x' }, { name: 'c' }] }), {
      spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'b' }, { name: 'a' }] },
    });
    assert.deepEqual(
      (specOf(out).containers as JsonObject[]).map((c) => c.name),
      ['x', 'c', 'b', 'a'],
    );
  });

  test('$setElementOrder orders by the live list as the deletion left it (Go slice sharing)', () => {
    // kube-apiserver deletes `x` in place, so the appended `n` takes the freed last slot of the
    // live list it then orders by: `c` stays before `n`
    const out = smp(pod, podWith({ containers: [{ name: 'x' }, { name: 'a' }, { name: 'c' }] }), {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'n' }],
        containers: [{ name: 'n' }, { name: 'x', $patch: 'delete' }],
      },
    });
    assert.deepEqual(
      (specOf(out).containers as JsonObject[]).map((c) => c.name),
      ['a', 'c', 'n'],
    );
  });

  test('$setElementOrder that disagrees with the patch list is refused', () => {
    const err = smpError(pod, live, {
      spec: {
        '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }],
        containers: [
          { name: 'app', image: 'a' },
          { name: 'sidecar', image: 'b' },
        ],
      },
    });
    assert.equal(err.errorClass, 'Internal');
    assert.match(err.message, /^The order in patch list:\n/);
  });

  test('$patch: delete removes the container with that name', () => {
    const out = smp(pod, live, { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } });
    assert.deepEqual(
      (specOf(out).containers as JsonObject[]).map((c) => c.name),
      ['app'],
    );
  });

  test('kubectl apply: delete an env var and change the image in one patch', () => {
    const out = smp(pod, live, {
      spec: {
        '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
        containers: [
          {
            '$setElementOrder/env': [{ name: 'A' }],
            env: [{ $patch: 'delete', name: 'B' }],
            image: 'nginx:1.1',
            name: 'app',
          },
        ],
      },
    });
    const app = (specOf(out).containers as JsonObject[])[0] as JsonObject;
    assert.equal(app.image, 'nginx:1.1');
    assert.deepEqual(app.env, [{ name: 'A', value: '1' }]);
    assert.equal(
      Object.keys(app).some((k) => k.startsWith('$')),
      false,
    );
  });

  test('$patch: replace in a list makes the other items the list', () => {
    const out = smp(pod, live, { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } });
    assert.deepEqual(specOf(out).containers, [{ name: 'only', image: 'x' }]);
  });

  test('$patch: merge in a list is refused', () => {
    const err = smpError(pod, live, { spec: { containers: [{ $patch: 'merge' }] } });
    assert.equal(err.message, 'merging lists cannot yet be specified in the patch');
  });

  test('an item without the merge key is refused', () => {
    const err = smpError(pod, live, { spec: { containers: [{ image: 'x' }] } });
    assert.equal(err.errorClass, 'Internal');
    assert.equal(err.message, 'map: map[image:x] does not contain declared merge key: name');
    const del = smpError(pod, live, { spec: { containers: [{ $patch: 'delete' }] } });
    assert.equal(del.message, 'map: map[$patch:delete] does not contain declared merge key: name');
  });

  test('an empty patch list leaves a merging list alone', () => {
    const out = smp(pod, live, { spec: { containers: [] } });
    assert.deepEqual(specOf(out).containers, (live as { spec: JsonObject }).spec.containers);
  });

  test('Service ports merge by port', () => {
    const out = smp(
      service,
      {
        spec: {
          ports: [
            { name: 'http', port: 80, targetPort: 8080 },
            { name: 'https', port: 443 },
          ],
        },
      },
      { spec: { ports: [{ port: 80, targetPort: 9090 }] } },
    );
    assert.deepEqual((out.spec as JsonObject).ports, [
      { name: 'http', port: 80, targetPort: 9090 },
      { name: 'https', port: 443 },
    ]);
  });

  test('list items of different types are refused, lists of lists are 422', () => {
    const mixed = smpError(pod, podWith({ containers: [{ name: 'a' }] }), { spec: { containers: ['x'] } });
    assert.equal(mixed.message, 'list element types are not identical: [[map[name:a]] [x]]');
    const nested = smpError(pod, { metadata: { finalizers: [['a']] } }, { metadata: { finalizers: ['b'] } });
    assert.equal(nested.errorClass, 'Unprocessable');
    assert.equal(nested.message, 'lists of lists are not supported');
  });
});

describe('lists that replace', () => {
  test('a list without a patch strategy is replaced (args, command)', () => {
    const out = smp(pod, podWith({ containers: [{ name: 'a', args: ['1', '2'], command: ['sh'] }] }), {
      spec: { containers: [{ name: 'a', args: ['3'] }] },
    });
    assert.deepEqual(specOf(out).containers, [{ name: 'a', args: ['3'], command: ['sh'] }]);
  });

  test('x-kubernetes-list-type map without a patch strategy still replaces (kube-apiserver reads only patch tags)', () => {
    // container resources.claims: listType map keyed by name, no patch strategy
    const out = smp(pod, podWith({ containers: [{ name: 'a', resources: { claims: [{ name: 'x' }, { name: 'y' }] } }] }), {
      spec: { containers: [{ name: 'a', resources: { claims: [{ name: 'z' }] } }] },
    });
    assert.deepEqual(specOf(out).containers, [{ name: 'a', resources: { claims: [{ name: 'z' }] } }]);
  });

  test('a kind without a schema merges maps and replaces lists', () => {
    const out = smp(unknownPatchSchema, { a: { b: 1, c: [1, 2] } }, { a: { c: [3], d: 4 } });
    assert.deepEqual(out, { a: { b: 1, c: [3], d: 4 } });
  });
});

describe('primitive lists', () => {
  test('finalizers (merge strategy): union, patch items first', () => {
    const out = smp(pod, { metadata: { finalizers: ['a', 'b'] } }, { metadata: { finalizers: ['c', 'a'] } });
    assert.deepEqual((out.metadata as JsonObject).finalizers, ['c', 'a', 'b']);
  });

  test('$deleteFromPrimitiveList removes finalizers', () => {
    const out = smp(
      pod,
      { metadata: { finalizers: ['a', 'b', 'c'] } },
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'missing'] } },
    );
    assert.deepEqual((out.metadata as JsonObject).finalizers, ['a', 'c']);
  });

  test('$deleteFromPrimitiveList does not create an absent list', () => {
    const out = smp(pod, { metadata: {} }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } });
    assert.deepEqual(out, { metadata: {} });
  });

  test('$setElementOrder on a primitive list, with a deletion', () => {
    const out = smp(
      pod,
      { metadata: { finalizers: ['a', 'b', 'c'] } },
      {
        metadata: {
          '$setElementOrder/finalizers': ['c', 'd', 'a'],
          finalizers: ['d'],
          '$deleteFromPrimitiveList/finalizers': ['b'],
        },
      },
    );
    assert.deepEqual((out.metadata as JsonObject).finalizers, ['c', 'd', 'a']);
  });

  test('a malformed directive key is a bad request', () => {
    const err = smpError(pod, { metadata: { finalizers: ['a'] } }, { metadata: { $deleteFromPrimitiveList: ['a'] } });
    assert.equal(err.errorClass, 'BadRequest');
    assert.equal(err.message, 'invalid patch format of primitive list');
    const order = smpError(pod, { metadata: {} }, { metadata: { '$setElementOrderX/finalizers': [] } });
    assert.equal(order.message, 'invalid patch format of setElementOrder list');
  });
});

describe('retainKeys', () => {
  const liveDeployment = {
    spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } },
  };

  test('Deployment strategy: switching to Recreate drops rollingUpdate', () => {
    const out = smp(deployment, liveDeployment, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    assert.deepEqual((out.spec as JsonObject).strategy, { type: 'Recreate' });
  });

  test('volumes: a volume changing source keeps only the listed keys', () => {
    const out = smp(
      pod,
      podWith({
        volumes: [
          { name: 'v', configMap: { name: 'cm' } },
          { name: 'w', emptyDir: {} },
        ],
      }),
      { spec: { volumes: [{ name: 'v', $retainKeys: ['name', 'secret'], secret: { secretName: 's' } }] } },
    );
    assert.deepEqual(specOf(out).volumes, [
      { name: 'v', secret: { secretName: 's' } },
      { name: 'w', emptyDir: {} },
    ]);
  });

  test('a patched key missing from $retainKeys is a bad request', () => {
    const err = smpError(deployment, liveDeployment, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: {} } } });
    assert.equal(err.errorClass, 'BadRequest');
    assert.equal(err.message, 'invalid patch format of retainKeys');
    const notAList = smpError(deployment, liveDeployment, { spec: { strategy: { $retainKeys: 'type' } } });
    assert.equal(notAList.message, 'invalid patch format of retainKeys');
  });
});

describe('top-level directives', () => {
  test('$patch: replace at the top replaces the object, $patch: delete empties it', () => {
    assert.deepEqual(smp(pod, { metadata: { name: 'a' }, spec: {} }, { $patch: 'replace', metadata: { name: 'b' } }), {
      metadata: { name: 'b' },
    });
    assert.deepEqual(smp(pod, { metadata: { name: 'a' } }, { $patch: 'delete' }), {});
  });
});
