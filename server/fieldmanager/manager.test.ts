import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../storage/interface.js';
import { loadCatalog } from '../apis/catalog.js';
import type { ResourceInfo } from '../apis/types.js';
import { StatusError } from '../machinery/status.js';
import { FieldManagers } from './field-managers.js';
import type { FieldManager } from './manager.js';
import type { ManagedFieldsEntry } from './managed.js';
import type { JsonMap } from './value.js';

const catalog = loadCatalog().resources();
const info = (group: string, version: string, resource: string): ResourceInfo => {
  const r = catalog.find((x) => x.group === group && x.version === version && x.resource === resource);
  assert.ok(r, `${group}/${version}/${resource} is served`);
  return r;
};
const managers = new FieldManagers();
const configMaps = managers.for(info('', 'v1', 'configmaps'));
const deployments = managers.for(info('apps', 'v1', 'deployments'));
const deploymentStatus = managers.for(info('apps', 'v1', 'deployments'), 'status');

type Obj = Record<string, unknown>;

function cm(data: Record<string, string>, extra: Obj = {}): Obj {
  const o: Obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: 'default', ...((extra.metadata as Obj) ?? {}) },
  };
  if (Object.keys(data).length > 0) o.data = data;
  return o;
}

/** a stored object: what a create by `manager` leaves */
function created(fm: FieldManager, obj: Obj, manager: string): KubeObject {
  const o = structuredClone(obj) as unknown as KubeObject;
  const mf = fm.update(null, o, manager);
  o.metadata.uid = 'uid-1';
  if (mf) o.metadata.managedFields = mf;
  return o;
}

function updated(fm: FieldManager, live: KubeObject, next: Obj, manager: string): KubeObject {
  const o = structuredClone(next) as unknown as KubeObject;
  o.metadata.uid = live.metadata.uid;
  const mf = fm.update(live, o, manager);
  if (mf) o.metadata.managedFields = mf;
  else delete o.metadata.managedFields;
  return o;
}

function applied(fm: FieldManager, live: KubeObject | null, config: Obj, manager: string, force = false): KubeObject {
  const o = fm.apply(live, structuredClone(config) as JsonMap, manager, force);
  if (!o.metadata.uid) o.metadata.uid = live?.metadata.uid ?? 'uid-1';
  return o;
}

/** manager name (and operation) -> fieldsV1 */
function owners(obj: KubeObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of (obj.metadata.managedFields ?? []) as ManagedFieldsEntry[]) {
    out[`${String(e.manager)}/${String(e.operation)}${e.subresource ? '/' + String(e.subresource) : ''}`] = e.fieldsV1;
  }
  return out;
}

function conflictOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    return err;
  }
  assert.fail('expected a conflict');
}

describe('Update entries', () => {
  it('a create owns what it set; maps and items new to the empty object carry `.`', () => {
    const o = created(configMaps, cm({ a: '1' }, { metadata: { labels: { app: 'x' } } }), 'kubectl-create');
    assert.deepEqual(owners(o), {
      'kubectl-create/Update': { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
    });
    const [e] = o.metadata.managedFields as ManagedFieldsEntry[];
    assert.equal(e.apiVersion, 'v1');
    assert.equal(e.fieldsType, 'FieldsV1');
    assert.match(String(e.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('a Deployment create is compared with Go’s empty Deployment', () => {
    const d = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {}, ports: [{ containerPort: 80 }] }], restartPolicy: 'Always' },
        },
      },
    };
    const o = created(deployments, d, 'kubectl-create');
    assert.deepEqual(owners(o)['kubectl-create/Update'], {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} }, 'f:type': {} },
        'f:template': {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"nginx"}': {
                '.': {},
                'f:image': {},
                'f:name': {},
                'f:ports': { '.': {}, 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
                'f:resources': {},
              },
            },
            'f:restartPolicy': {},
          },
        },
      },
    });
  });

  it('a change moves ownership to the changer; update never conflicts', () => {
    const o1 = created(configMaps, cm({ a: '1', b: '2' }), 'creator');
    const o2 = updated(configMaps, o1, cm({ a: 'changed', b: '2' }), 'editor');
    assert.deepEqual(owners(o2), {
      'creator/Update': { 'f:data': { '.': {}, 'f:b': {} } },
      'editor/Update': { 'f:data': { 'f:a': {} } },
    });
  });

  it('a removed field leaves every owner', () => {
    const o1 = created(configMaps, cm({ a: '1', b: '2' }), 'creator');
    const o2 = updated(configMaps, o1, cm({ a: '1' }), 'editor');
    assert.deepEqual(owners(o2), { 'creator/Update': { 'f:data': { '.': {}, 'f:a': {} } } });
  });

  it('an unchanged write keeps the entry as it was', () => {
    const o1 = created(configMaps, cm({ a: '1' }), 'creator');
    const o2 = updated(configMaps, o1, { ...cm({ a: '1' }), metadata: { ...(o1.metadata as Obj) } }, 'editor');
    assert.deepEqual(o2.metadata.managedFields, o1.metadata.managedFields);
  });

  it('no fieldManager: the manager is "unknown"', () => {
    const o = created(configMaps, cm({ a: '1' }), '');
    assert.deepEqual(Object.keys(owners(o)), ['unknown/Update']);
  });

  it('a status write records the subresource and does not own spec', () => {
    const d = created(
      deployments,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: {} },
      },
      'creator',
    );
    const next = { ...(structuredClone(d) as unknown as Obj), status: { replicas: 1 } };
    const s = updated(deploymentStatus, d, next, 'controller');
    assert.deepEqual(owners(s)['controller/Update/status'], { 'f:status': { 'f:replicas': {} } });
    const entry = (s.metadata.managedFields as ManagedFieldsEntry[]).find((e) => e.manager === 'controller');
    assert.equal(entry?.subresource, 'status');
  });

  it('a status write owns no label change where the status endpoint keeps the stored labels', () => {
    const d = created(
      deployments,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', labels: { a: '1' } }, spec: { replicas: 1 } },
      'creator',
    );
    const next = structuredClone(d) as unknown as Obj;
    next.metadata = { ...(next.metadata as Obj), labels: { a: '1', b: '2' } };
    next.status = { replicas: 1 };
    const keeping = managers.for(info('apps', 'v1', 'deployments'), 'status', true);
    assert.deepEqual(owners(updated(keeping, d, next, 'controller'))['controller/Update/status'], { 'f:status': { 'f:replicas': {} } });
    const plain = owners(updated(deploymentStatus, d, next, 'controller'))['controller/Update/status'] as Obj;
    assert.ok('f:metadata' in plain);
  });

  it('the main resource does not own status', () => {
    const d = created(
      deployments,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1 }, status: { replicas: 3 } },
      'creator',
    );
    assert.equal(JSON.stringify(owners(d)).includes('f:status'), false);
  });

  it('Update entries beyond ten fold into ancient-changes', () => {
    let o = created(configMaps, cm({ k0: '0' }), 'm0');
    const data: Record<string, string> = { k0: '0' };
    for (let i = 1; i <= 11; i++) {
      data[`k${i}`] = String(i);
      o = updated(configMaps, o, { ...cm({ ...data }), metadata: o.metadata }, `m${i}`);
    }
    const names = (o.metadata.managedFields as ManagedFieldsEntry[]).map((e) => e.manager);
    assert.equal(names.length, 10);
    assert.ok(names.includes('ancient-changes'));
  });
});

describe('managedFields rules', () => {
  it('[{}] strips managedFields (rule 3)', () => {
    const o1 = created(configMaps, cm({ a: '1' }), 'creator');
    const next = cm({ a: '1' });
    (next.metadata as Obj).managedFields = [{}];
    const o2 = updated(configMaps, o1, next, 'editor');
    assert.equal(o2.metadata.managedFields, undefined);
  });

  it('[] does not reset (rule 4)', () => {
    const o1 = created(configMaps, cm({ a: '1' }), 'creator');
    const next = cm({ a: '1', b: '2' });
    (next.metadata as Obj).managedFields = [];
    const o2 = updated(configMaps, o1, next, 'editor');
    assert.deepEqual(owners(o2), { 'creator/Update': { 'f:data': { '.': {}, 'f:a': {} } }, 'editor/Update': { 'f:data': { 'f:b': {} } } });
  });

  it('a reset with changes: reset first, then the requester owns the changes (rule 5)', () => {
    const o1 = created(configMaps, cm({ a: '1' }), 'creator');
    const next = cm({ a: '1', b: '2' });
    (next.metadata as Obj).managedFields = [{}];
    const o2 = updated(configMaps, o1, next, 'editor');
    assert.deepEqual(owners(o2), { 'editor/Update': { 'f:data': { 'f:b': {} } } });
  });

  it('an object without managedFields is not tracked by later updates', () => {
    const o1 = created(configMaps, cm({ a: '1' }), 'creator');
    delete o1.metadata.managedFields;
    const o2 = updated(configMaps, o1, cm({ a: '2' }), 'editor');
    assert.equal(o2.metadata.managedFields, undefined);
  });

  it('managedFields sent with an update replace the stored ones', () => {
    const o1 = created(configMaps, cm({ a: '1' }), 'creator');
    const next = cm({ a: '1' });
    (next.metadata as Obj).managedFields = [
      {
        manager: 'someone',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2020-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} } },
      },
    ];
    const o2 = updated(configMaps, o1, next, 'editor');
    assert.deepEqual(owners(o2), { 'someone/Update': { 'f:data': { 'f:a': {} } } });
  });

  it('managedFields in an apply configuration are refused (rule 1)', () => {
    const config = cm({ a: '1' });
    (config.metadata as Obj).managedFields = [];
    const err = conflictOf(() => applied(configMaps, null, config, 'a'));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'metadata.managedFields must be nil');
  });
});

describe('apply', () => {
  it('creates; the applier owns exactly what it applied', () => {
    const o = applied(configMaps, null, cm({ a: '1' }, { metadata: { labels: { app: 'x' } } }), 'a');
    assert.deepEqual(o.data, { a: '1' });
    assert.deepEqual(owners(o), { 'a/Apply': { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } } });
    const [e] = o.metadata.managedFields as ManagedFieldsEntry[];
    assert.equal(e.operation, 'Apply');
    assert.equal(e.apiVersion, 'v1');
  });

  it('a different value owned by another applier conflicts, naming field and manager', () => {
    const o1 = applied(configMaps, null, cm({ a: '1' }), 'first');
    const err = conflictOf(() => applied(configMaps, o1, cm({ a: '2' }), 'second'));
    assert.equal(err.code, 409);
    assert.equal(err.reason, 'Conflict');
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "first": .data.a');
    assert.deepEqual(err.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "first"', field: '.data.a' }]);
  });

  it('conflicts with Update managers name their version; several are listed per manager', () => {
    const o1 = created(configMaps, cm({ a: '1', b: '2' }), 'kubectl-client-side-apply');
    const err = conflictOf(() => applied(configMaps, o1, cm({ a: 'x', b: 'y' }), 'ssa'));
    assert.equal(err.message, 'Apply failed with 2 conflicts: conflicts with "kubectl-client-side-apply" using v1:\n- .data.a\n- .data.b');
    assert.deepEqual(
      err.details?.causes?.map((c) => [c.field, c.message]),
      [
        ['.data.a', 'conflict with "kubectl-client-side-apply" using v1'],
        ['.data.b', 'conflict with "kubectl-client-side-apply" using v1'],
      ],
    );
  });

  it('force takes the field from the other manager', () => {
    const o1 = applied(configMaps, null, cm({ a: '1', b: '1' }), 'first');
    const o2 = applied(configMaps, o1, cm({ a: '2' }), 'second', true);
    assert.deepEqual(o2.data, { a: '2', b: '1' });
    assert.deepEqual(owners(o2), { 'first/Apply': { 'f:data': { 'f:b': {} } }, 'second/Apply': { 'f:data': { 'f:a': {} } } });
  });

  it('equal values give shared ownership; changing a shared field conflicts with all owners', () => {
    const o1 = applied(configMaps, null, cm({ a: '1' }), 'first');
    const o2 = applied(configMaps, o1, cm({ a: '1' }), 'second');
    assert.deepEqual(owners(o2), { 'first/Apply': { 'f:data': { 'f:a': {} } }, 'second/Apply': { 'f:data': { 'f:a': {} } } });
    const o3 = updated(configMaps, o2, cm({ a: '1', z: 'z' }), 'third');
    const err = conflictOf(() => applied(configMaps, o3, cm({ a: '9' }), 'fourth'));
    assert.match(
      err.message,
      /^Apply failed with 2 conflicts: conflicts with "first":\n- \.data\.a\nconflicts with "second":\n- \.data\.a$/,
    );
  });

  it('a field the applier drops is removed when nobody else owns it', () => {
    const o1 = applied(configMaps, null, cm({ a: '1', b: '2' }), 'first');
    const o2 = applied(configMaps, o1, cm({ a: '1' }), 'first');
    assert.deepEqual(o2.data, { a: '1' });
    assert.deepEqual(owners(o2), { 'first/Apply': { 'f:data': { 'f:a': {} } } });
  });

  it('a dropped field someone else owns stays (and the applier loses it)', () => {
    const o1 = applied(configMaps, null, cm({ a: '1', b: '2' }), 'first');
    const o2 = applied(configMaps, o1, cm({ b: '2' }), 'second');
    const o3 = applied(configMaps, o2, cm({ a: '1' }), 'first');
    assert.deepEqual(o3.data, { a: '1', b: '2' });
    assert.deepEqual(owners(o3), { 'first/Apply': { 'f:data': { 'f:a': {} } }, 'second/Apply': { 'f:data': { 'f:b': {} } } });
  });

  it('applying the same configuration again changes nothing', () => {
    const o1 = applied(configMaps, null, cm({ a: '1' }), 'first');
    const o2 = applied(configMaps, o1, cm({ a: '1' }), 'first');
    assert.deepEqual(o2, o1);
  });

  it('a wrong kind or version is refused', () => {
    const err = conflictOf(() => applied(configMaps, null, { ...cm({}), apiVersion: 'v2' }, 'a'));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'invalid object type: /v2, Kind=ConfigMap');
  });

  it('fields the schema does not declare are refused', () => {
    const err = conflictOf(() => applied(configMaps, null, { ...cm({}), spec: { x: 1 } }, 'a'));
    assert.equal(err.code, 500);
    assert.equal(err.message, 'failed to create typed patch object (default/cm; /v1, Kind=ConfigMap): .spec: field not declared in schema');
  });

  it('an object without managedFields gets a before-first-apply owner for what was there', () => {
    const live = { ...cm({ a: '1', b: '2' }), metadata: { name: 'cm', namespace: 'default', uid: 'u' } } as unknown as KubeObject;
    const err = conflictOf(() => applied(configMaps, live, cm({ a: '9' }), 'ssa'));
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a');
    const o = applied(configMaps, live, cm({ a: '9' }), 'ssa', true);
    assert.deepEqual(owners(o), {
      'ssa/Apply': { 'f:data': { 'f:a': {} } },
      'before-first-apply/Update': { 'f:data': { '.': {}, 'f:b': {} } },
    });
  });
});

describe('merge by schema', () => {
  const deployment = (containers: unknown[], extra: Obj = {}): Obj => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers } }, ...extra },
  });
  const containersOf = (o: KubeObject) => ((o.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers;

  it('map-lists merge by key: each applier keeps its items, a change to another’s item conflicts', () => {
    const o1 = applied(deployments, null, deployment([{ name: 'web', image: 'nginx:1' }]), 'app');
    const o2 = applied(deployments, o1, deployment([{ name: 'sidecar', image: 'envoy' }]), 'mesh');
    assert.deepEqual(
      containersOf(o2).map((c) => c.name),
      ['web', 'sidecar'],
    );
    const err = conflictOf(() => applied(deployments, o2, deployment([{ name: 'web', image: 'nginx:2' }]), 'mesh'));
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "app": .spec.template.spec.containers[name="web"].image');
  });

  it('an item the applier drops is removed; items of others stay', () => {
    const o1 = applied(
      deployments,
      null,
      deployment([
        { name: 'a', image: 'x' },
        { name: 'b', image: 'y' },
      ]),
      'app',
    );
    const o2 = applied(deployments, o1, deployment([{ name: 'c', image: 'z' }]), 'other');
    const o3 = applied(deployments, o2, deployment([{ name: 'a', image: 'x' }]), 'app');
    assert.deepEqual(
      containersOf(o3).map((c) => c.name),
      ['a', 'c'],
    );
  });

  it('atomic maps (the selector) are owned and replaced whole', () => {
    const o1 = applied(deployments, null, deployment([{ name: 'a', image: 'x' }]), 'app');
    assert.deepEqual((owners(o1)['app/Apply'] as Obj)['f:spec'] && ((owners(o1)['app/Apply'] as Obj)['f:spec'] as Obj)['f:selector'], {});
    const err = conflictOf(() =>
      applied(deployments, o1, { ...deployment([]), spec: { selector: { matchLabels: { app: 'other' } } } }, 'other'),
    );
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "app": .spec.selector');
  });

  it('atomic lists (a container’s command) are leaves', () => {
    const o1 = applied(deployments, null, deployment([{ name: 'a', image: 'x', command: ['sh', '-c'] }]), 'app');
    const c = ((((owners(o1)['app/Apply'] as Obj)['f:spec'] as Obj)['f:template'] as Obj)['f:spec'] as Obj)['f:containers'] as Obj;
    assert.deepEqual(c['k:{"name":"a"}'], { '.': {}, 'f:command': {}, 'f:image': {}, 'f:name': {} });
  });

  it('sets (finalizers) merge by value', () => {
    const withFinalizers = (fins: string[]) => ({ ...cm({}), metadata: { name: 'cm', namespace: 'default', finalizers: fins } });
    const o1 = applied(configMaps, null, withFinalizers(['a/x']), 'one');
    const o2 = applied(configMaps, o1, withFinalizers(['b/y']), 'two');
    assert.deepEqual(o2.metadata.finalizers, ['a/x', 'b/y']);
    assert.deepEqual(owners(o2)['two/Apply'], { 'f:metadata': { 'f:finalizers': { 'v:"b/y"': {} } } });
    const o3 = applied(configMaps, o2, withFinalizers([]), 'one');
    assert.deepEqual(o3.metadata.finalizers, ['b/y']);
  });

  it('granular maps (labels) merge by key', () => {
    const labelled = (labels: Record<string, string>) => ({ ...cm({}), metadata: { name: 'cm', namespace: 'default', labels } });
    const o1 = applied(configMaps, null, labelled({ a: '1' }), 'one');
    const o2 = applied(configMaps, o1, labelled({ b: '2' }), 'two');
    assert.deepEqual(o2.metadata.labels, { a: '1', b: '2' });
  });

  it('map-list keys take their schema default (ports without protocol)', () => {
    const o1 = applied(deployments, null, deployment([{ name: 'a', image: 'x', ports: [{ containerPort: 80 }] }]), 'app');
    assert.ok(JSON.stringify(owners(o1)).includes('k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}'));
  });

  it('a list item without its key is refused', () => {
    const err = conflictOf(() => applied(deployments, null, deployment([{ image: 'x' }]), 'app'));
    assert.equal(err.code, 500);
    assert.match(
      err.message,
      /\.spec\.template\.spec\.containers: element 0: associative list with keys has an element that omits key field "name"/,
    );
  });
});

describe('scale', () => {
  it('a changed replica count moves spec.replicas to the scaler’s Update entry for scale (no time)', () => {
    const d = applied(
      deployments,
      null,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd', namespace: 'default' },
        spec: { replicas: 2, selector: { matchLabels: { a: 'b' } } },
      },
      'app',
    );
    const next = structuredClone(d);
    (next.spec as Obj).replicas = 5;
    const mf = deployments.scaleUpdate(d, next, 'kubectl') ?? [];
    assert.deepEqual(
      mf.map((e) => [e.manager, e.operation, e.apiVersion, e.subresource, e.time !== undefined, e.fieldsV1]),
      [
        ['app', 'Apply', 'apps/v1', undefined, true, { 'f:spec': { 'f:selector': {} } }],
        ['kubectl', 'Update', 'apps/v1', 'scale', false, { 'f:spec': { 'f:replicas': {} } }],
      ],
    );
    // the same count again changes nothing
    assert.deepEqual(deployments.scaleUpdate(d, structuredClone(d), 'kubectl'), d.metadata.managedFields);
  });
});

describe('versions', () => {
  const hpaV2 = managers.for(info('autoscaling', 'v2', 'horizontalpodautoscalers'));
  const hpaV1 = managers.for(info('autoscaling', 'v1', 'horizontalpodautoscalers'));
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };

  it('a manager recorded in another version loses what a write in this version changed', () => {
    const v2 = applied(
      hpaV2,
      null,
      {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h', namespace: 'default' },
        spec: { scaleTargetRef: target, minReplicas: 1, maxReplicas: 5 },
      },
      'v2-applier',
    );
    // the same object as autoscaling/v1 speaks it, written with a new maxReplicas
    const asV1 = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: v2.metadata,
      spec: { scaleTargetRef: target, minReplicas: 1, maxReplicas: 9 },
    } as unknown as KubeObject;
    const liveV1 = { ...asV1, spec: { ...(asV1.spec as Obj), maxReplicas: 5 } } as unknown as KubeObject;
    const o = updated(hpaV1, liveV1, asV1 as unknown as Obj, 'v1-writer');
    assert.deepEqual(owners(o)['v1-writer/Update'], { 'f:spec': { 'f:maxReplicas': {} } });
    const v2Owner = JSON.stringify(owners(o)['v2-applier/Apply']);
    assert.ok(!v2Owner.includes('f:maxReplicas') && v2Owner.includes('f:minReplicas'), v2Owner);
    const entry = (o.metadata.managedFields as ManagedFieldsEntry[]).find((e) => e.manager === 'v2-applier');
    assert.equal(entry?.apiVersion, 'autoscaling/v2');
  });
});
