import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { StatusError } from '../machinery/status.js';
import { beforeDelete, gcFinalizers, markAsDeleting } from './deletion.js';
import { podStrategy } from './core/pods.js';
import { configMapStrategy } from './core/config.js';
import { generateName } from './store.js';
import { base64ErrorOffset } from './core/config.js';
import { defaultPullPolicy, podQOSClass } from './core/pod-spec.js';

const now = new Date('2025-01-01T00:00:00Z');

function boundPod(extra: Record<string, unknown> = {}): KubeObject {
  return {
    metadata: { name: 'p', generation: 1 },
    spec: { nodeName: 'n', terminationGracePeriodSeconds: 30, ...extra },
    status: { phase: 'Running' },
  };
}

test('pods: graceful deletion decisions', () => {
  const s = podStrategy();
  const p = boundPod();
  const opts = {};
  assert.deepEqual(beforeDelete(s, p, opts, now, '', 'Pod'), { graceful: true, pending: false });
  assert.equal(p.metadata.deletionTimestamp, '2025-01-01T00:00:30Z');
  assert.equal(p.metadata.deletionGracePeriodSeconds, 30);
  assert.equal(p.metadata.generation, 2);
  // a second delete with a longer period is pending; a shorter one moves the timestamp
  assert.deepEqual(beforeDelete(s, p, { gracePeriodSeconds: 40 }, now, '', 'Pod'), { graceful: false, pending: true });
  const shorter = { gracePeriodSeconds: 10 };
  assert.deepEqual(beforeDelete(s, p, shorter, now, '', 'Pod'), { graceful: true, pending: false });
  assert.equal(p.metadata.deletionTimestamp, '2025-01-01T00:00:10Z');
  assert.equal(p.metadata.deletionGracePeriodSeconds, 10);
  // unbound or finished pods get no grace period
  const unbound = boundPod({ nodeName: undefined });
  const o = { gracePeriodSeconds: 20 } as { gracePeriodSeconds?: number };
  beforeDelete(s, unbound, o, now, '', 'Pod');
  assert.equal(o.gracePeriodSeconds, 0);
  const done: KubeObject = { ...boundPod(), status: { phase: 'Succeeded' } };
  const o2 = {} as { gracePeriodSeconds?: number };
  beforeDelete(s, done, o2, now, '', 'Pod');
  assert.equal(o2.gracePeriodSeconds, 0);
  // negative periods count as 1
  const neg = { gracePeriodSeconds: -5 };
  beforeDelete(s, boundPod(), neg, now, '', 'Pod');
  assert.equal(neg.gracePeriodSeconds, 1);
});

test('kinds without graceful deletion', () => {
  const obj: KubeObject = { metadata: { name: 'c' } };
  assert.deepEqual(beforeDelete(configMapStrategy(), obj, {}, now, '', 'ConfigMap'), { graceful: false, pending: false });
  assert.throws(
    () => beforeDelete(configMapStrategy(), { metadata: { name: 'c', uid: 'a' } }, { preconditions: { uid: 'b' } }, now, '', 'ConfigMap'),
    (e) => e instanceof StatusError && e.code === 409,
  );
});

test('garbage collector finalizers by policy', () => {
  const obj = (finalizers?: string[]): KubeObject => ({ metadata: { name: 'x', finalizers } });
  assert.deepEqual(gcFinalizers('DeleteDependents', obj(), {}), { changed: false, finalizers: [] });
  assert.deepEqual(gcFinalizers('OrphanDependents', obj(), {}), { changed: true, finalizers: ['orphan'] });
  assert.deepEqual(gcFinalizers('OrphanDependents', obj(), { propagationPolicy: 'Background' }), { changed: false, finalizers: [] });
  assert.deepEqual(gcFinalizers('DeleteDependents', obj(['a.io/x']), { propagationPolicy: 'Foreground' }), {
    changed: true,
    finalizers: ['a.io/x', 'foregroundDeletion'],
  });
  assert.deepEqual(gcFinalizers('DeleteDependents', obj(['orphan']), { orphanDependents: false }), { changed: true, finalizers: [] });
  assert.deepEqual(gcFinalizers('Unsupported', obj(), { propagationPolicy: 'Orphan' }), { changed: false, finalizers: [] });
});

test('markAsDeleting keeps an earlier deletionTimestamp', () => {
  const o: KubeObject = { metadata: { name: 'x', generation: 3 } };
  markAsDeleting(o, now);
  assert.equal(o.metadata.deletionTimestamp, '2025-01-01T00:00:00Z');
  assert.equal(o.metadata.deletionGracePeriodSeconds, 0);
  assert.equal(o.metadata.generation, 4);
  markAsDeleting(o, new Date('2026-01-01T00:00:00Z'));
  assert.equal(o.metadata.deletionTimestamp, '2025-01-01T00:00:00Z');
  assert.equal(o.metadata.generation, 4);
});

test('generated names: prefix cut to 58, five suffix characters', () => {
  const long = 'x'.repeat(70);
  const n = generateName(long);
  assert.equal(n.length, 63);
  assert.match(n.slice(58), /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
});

test('pod helpers: image pull policy, QoS class', () => {
  assert.equal(defaultPullPolicy('nginx'), 'Always');
  assert.equal(defaultPullPolicy('nginx:latest'), 'Always');
  assert.equal(defaultPullPolicy('localhost:5000/nginx'), 'Always');
  assert.equal(defaultPullPolicy('localhost:5000/nginx:1.2'), 'IfNotPresent');
  assert.equal(defaultPullPolicy('nginx@sha256:abc'), 'IfNotPresent');
  assert.equal(podQOSClass({ containers: [{ name: 'a' }] }), 'BestEffort');
  assert.equal(podQOSClass({ containers: [{ resources: { limits: { cpu: '500m', memory: '128Mi' } } }] }), 'Guaranteed');
  assert.equal(
    podQOSClass({ containers: [{ resources: { requests: { cpu: '0.5', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } } }] }),
    'Guaranteed',
  );
  assert.equal(podQOSClass({ containers: [{ resources: { requests: { cpu: '100m' } } }] }), 'Burstable');
});

test('base64 errors at Go offsets', () => {
  assert.equal(base64ErrorOffset('aGVsbG8='), -1);
  assert.equal(base64ErrorOffset('aGVs\nbG8='), -1);
  assert.equal(base64ErrorOffset('aGV!'), 3);
  assert.equal(base64ErrorOffset('aGVsbG8'), 4);
  assert.equal(base64ErrorOffset('aG=x'), 3);
});
