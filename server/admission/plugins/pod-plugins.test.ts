// ServiceAccount, Priority, LimitRanger and RuntimeClass over a real registry on real etcd.
// Pods are created through the registry with these plugins as its admission hooks (in kube's
// order), so what they add also passes kapi's pod validation and is what gets stored.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import { containerOrder, podSpecOrder } from '../../registry/core/pod-spec.js';
import { ensureSystemPriorityClasses } from '../../controllers/system-priority-classes.js';
import { silentLogger } from '../../controllers/types.js';
import { ctx, statusOf, startRegistry, type RegistryHarness } from '../../registry/testing/harness.js';
import type { AdmissionHooks } from '../../registry/rest.js';
import type { AdmissionPlugin } from '../plugin.js';
import { defaultTolerationSecondsFactory } from './default-toleration-seconds.js';
import { limitRangerAnnotation, limitRangerFactory } from './limit-ranger.js';
import { priorityFactory } from './priority.js';
import { runtimeClassFactory } from './runtime-class.js';
import { serviceAccountFactory, tokenMountPath } from './serviceaccount.js';
import { buildPlugin, requestContext } from './test-helpers.js';

type Json = Record<string, unknown>;

/** the plugins as the registry's admission hooks: every mutate in order, then every validate */
function hooks(plugins: AdmissionPlugin[]): AdmissionHooks {
  return {
    async mutate(attrs) {
      let obj = attrs.object!;
      for (const p of plugins) {
        if (p.handles && !p.handles({ ...attrs, object: obj })) continue;
        if (p.mutate) obj = await p.mutate({ ...attrs, object: obj }, requestContext());
      }
      return obj;
    },
    async validate(attrs) {
      for (const p of plugins) {
        if (p.handles && !p.handles(attrs)) continue;
        if (p.validate) await p.validate(attrs, requestContext());
      }
    },
  };
}

function pod(name: string, spec: Json = {}, meta: Json = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...meta },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec },
  };
}

const specOf = (o: KubeObject): Json => o.spec as Json;
const containersOf = (o: KubeObject, key = 'containers'): Json[] => (specOf(o)[key] ?? []) as Json[];

describe('pod admission plugins over a real registry', () => {
  let h: RegistryHarness;
  let plugins: Record<string, AdmissionPlugin>;
  const ns = 'team';

  async function create(obj: KubeObject, use: string[], namespace = ns): Promise<KubeObject> {
    const admission = hooks(use.map((n) => plugins[n]!));
    return h.rest('', 'v1', obj.kind === 'Pod' ? 'pods' : 'persistentvolumeclaims').create(ctx(namespace, { admission }), obj);
  }

  async function make(resource: string, obj: KubeObject, namespace = ''): Promise<void> {
    const [group, version, res] = resource.split('/') as [string, string, string];
    await h.rest(group, version, res).create(ctx(namespace), obj);
  }

  before(async () => {
    h = await startRegistry();
    plugins = {
      ServiceAccount: await buildPlugin(serviceAccountFactory, h.registry),
      Priority: await buildPlugin(priorityFactory, h.registry),
      DefaultTolerationSeconds: await buildPlugin(defaultTolerationSecondsFactory, h.registry),
      LimitRanger: await buildPlugin(limitRangerFactory, h.registry),
      RuntimeClass: await buildPlugin(runtimeClassFactory, h.registry),
    };
    await make('/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await make(
      '/v1/serviceaccounts',
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' }, imagePullSecrets: [{ name: 'regcred' }] },
      ns,
    );
  });
  after(async () => {
    await h?.close();
  });

  describe('ServiceAccount', () => {
    it('defaults the service account, mounts the projected token volume in every container and takes pull secrets', async () => {
      const got = await create(
        pod('sa1', {
          initContainers: [{ name: 'init', image: 'busybox:1.36' }],
          containers: [
            { name: 'a', image: 'nginx:1.27' },
            { name: 'b', image: 'nginx:1.27' },
          ],
        }),
        ['ServiceAccount'],
      );
      const spec = specOf(got);
      assert.equal(spec.serviceAccountName, 'default');
      assert.equal(spec.serviceAccount, 'default');
      assert.deepEqual(spec.imagePullSecrets, [{ name: 'regcred' }]);
      const volumes = spec.volumes as Json[];
      assert.equal(volumes.length, 1);
      const volName = volumes[0]!.name as string;
      assert.match(volName, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.deepEqual(volumes[0]!.projected, {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
        defaultMode: 420,
      });
      for (const c of [...containersOf(got, 'initContainers'), ...containersOf(got)]) {
        assert.deepEqual(c.volumeMounts, [{ name: volName, readOnly: true, mountPath: tokenMountPath }], String(c.name));
      }
    });

    it('a missing service account is refused with kube message', async () => {
      const err = await statusOf(create(pod('sa2', { serviceAccountName: 'ghost' }), ['ServiceAccount']));
      assert.equal(err.code, 403);
      assert.equal(err.message, `pods "sa2" is forbidden: error looking up service account ${ns}/ghost: serviceaccount "ghost" not found`);
      const gen = await statusOf(
        create({ ...pod('', { serviceAccountName: 'ghost' }), metadata: { generateName: 'web-' } }, ['ServiceAccount']),
      );
      assert.match(gen.message, /^pods "web-" is forbidden: error looking up service account/);
    });

    it('automountServiceAccountToken: the pod wins over the service account; an existing mount at the path is kept', async () => {
      await make(
        '/v1/serviceaccounts',
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'quiet' }, automountServiceAccountToken: false },
        ns,
      );
      const off = await create(pod('sa3', { serviceAccountName: 'quiet' }), ['ServiceAccount']);
      assert.equal(specOf(off).volumes, undefined);
      assert.equal(containersOf(off)[0]!.volumeMounts, undefined);
      const on = await create(pod('sa4', { serviceAccountName: 'quiet', automountServiceAccountToken: true }), ['ServiceAccount']);
      assert.equal((specOf(on).volumes as Json[]).length, 1);
      const podOff = await create(pod('sa5', { automountServiceAccountToken: false }), ['ServiceAccount']);
      assert.equal(specOf(podOff).volumes, undefined);
      const own = await create(
        pod('sa6', {
          volumes: [{ name: 'mine', emptyDir: {} }],
          containers: [
            { name: 'a', image: 'nginx:1.27', volumeMounts: [{ name: 'mine', mountPath: tokenMountPath }] },
            { name: 'b', image: 'nginx:1.27' },
          ],
        }),
        ['ServiceAccount'],
      );
      assert.deepEqual(containersOf(own)[0]!.volumeMounts, [{ name: 'mine', mountPath: tokenMountPath }]);
      assert.equal((containersOf(own)[1]!.volumeMounts as Json[])[0]!.mountPath, tokenMountPath);
      assert.equal((specOf(own).volumes as Json[]).length, 2);
    });

    it('mirror pods are not changed and may not name a service account or secrets', async () => {
      const mirror = { annotations: { 'kubernetes.io/config.mirror': 'abc' } };
      const got = await create(pod('m1', {}, mirror), ['ServiceAccount']);
      assert.equal(specOf(got).serviceAccountName, undefined);
      assert.equal(specOf(got).volumes, undefined);
      const sa = await statusOf(create(pod('m2', { serviceAccountName: 'default' }, mirror), ['ServiceAccount']));
      assert.equal(sa.message, 'pods "m2" is forbidden: a mirror pod may not reference service accounts');
      const secret = await statusOf(
        create(pod('m3', { volumes: [{ name: 's', secret: { secretName: 'x' } }] }, mirror), ['ServiceAccount']),
      );
      assert.equal(secret.message, 'pods "m3" is forbidden: a mirror pod may not reference secrets');
    });

    it('enforce-mountable-secrets limits secret volumes, env and pull secrets to the listed ones', async () => {
      await make(
        '/v1/serviceaccounts',
        {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'strict', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } },
          secrets: [{ name: 'allowed' }],
        },
        ns,
      );
      await create(pod('e1', { serviceAccountName: 'strict', volumes: [{ name: 's', secret: { secretName: 'allowed' } }] }), [
        'ServiceAccount',
      ]);
      const vol = await statusOf(
        create(pod('e2', { serviceAccountName: 'strict', volumes: [{ name: 's', secret: { secretName: 'other' } }] }), ['ServiceAccount']),
      );
      assert.equal(
        vol.message,
        'pods "e2" is forbidden: volume with secret.secretName="other" is not allowed because service account strict does not reference that secret',
      );
      const env = await statusOf(
        create(
          pod('e3', {
            serviceAccountName: 'strict',
            containers: [
              { name: 'c', image: 'nginx:1.27', env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'other', key: 'pw' } } }] },
            ],
          }),
          ['ServiceAccount'],
        ),
      );
      assert.equal(
        env.message,
        'pods "e3" is forbidden: container c with envVar PW referencing secret.secretName="other" is not allowed because service account strict does not reference that secret',
      );
      const pull = await statusOf(
        create(pod('e4', { serviceAccountName: 'strict', imagePullSecrets: [{ name: 'reg' }] }), ['ServiceAccount']),
      );
      assert.equal(
        pull.message,
        'pods "e4" is forbidden: imagePullSecrets[0].name="reg" is not allowed because service account strict does not reference that imagePullSecret',
      );
    });
  });

  describe('Priority', () => {
    it('priority 0 and PreemptLowerPriority without a default class; the system classes resolve once created', async () => {
      const got = await create(pod('p1'), ['Priority']);
      assert.equal(specOf(got).priority, 0);
      assert.equal(specOf(got).preemptionPolicy, 'PreemptLowerPriority');
      assert.equal(specOf(got).priorityClassName, undefined);
      await ensureSystemPriorityClasses({ resolver: h.registry, log: silentLogger });
      await ensureSystemPriorityClasses({ resolver: h.registry, log: silentLogger });
      const crit = await create(pod('p2', { priorityClassName: 'system-node-critical' }), ['Priority']);
      assert.equal(specOf(crit).priority, 2000001000);
      const list = await h.rest('scheduling.k8s.io', 'v1', 'priorityclasses').list(ctx(), {});
      assert.deepEqual(list.items.map((i) => [i.metadata.name, i.value, i.preemptionPolicy]).sort(), [
        ['system-cluster-critical', 2000000000, 'PreemptLowerPriority'],
        ['system-node-critical', 2000001000, 'PreemptLowerPriority'],
      ]);
    });

    it('an unknown class is refused; a globalDefault class is taken by pods without one; only one default', async () => {
      const err = await statusOf(create(pod('p3', { priorityClassName: 'nope' }), ['Priority']));
      assert.equal(err.code, 403);
      assert.equal(err.message, 'pods "p3" is forbidden: no PriorityClass with name nope was found');
      const pcs = h.rest('scheduling.k8s.io', 'v1', 'priorityclasses');
      const pcCtx = ctx('', { admission: hooks([plugins.Priority!]) });
      await pcs.create(pcCtx, {
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name: 'normal' },
        value: 1000,
        globalDefault: true,
        preemptionPolicy: 'Never',
      });
      const second = await statusOf(
        pcs.create(pcCtx, {
          apiVersion: 'scheduling.k8s.io/v1',
          kind: 'PriorityClass',
          metadata: { name: 'other' },
          value: 5,
          globalDefault: true,
        }),
      );
      assert.equal(
        second.message,
        'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass normal is already marked as default. Only one default can exist',
      );
      const got = await create(pod('p4'), ['Priority']);
      assert.equal(specOf(got).priorityClassName, 'normal');
      assert.equal(specOf(got).priority, 1000);
      assert.equal(specOf(got).preemptionPolicy, 'Never');
      const wrong = await statusOf(create(pod('p5', { priority: 7 }), ['Priority']));
      assert.equal(
        wrong.message,
        'pods "p5" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
      );
      await pcs.delete(ctx(), 'normal', {});
    });

    it('an update without priority keeps the stored one', async () => {
      const admission = hooks([plugins.Priority!]);
      const stored = await create(pod('p6'), ['Priority']);
      const { object } = await h.rest('', 'v1', 'pods').update(
        ctx(ns, { admission }),
        'p6',
        (cur) => {
          const next = structuredClone(cur!) as KubeObject;
          delete (next.spec as Json).priority;
          delete (next.spec as Json).preemptionPolicy;
          next.metadata.labels = { touched: 'yes' };
          return next;
        },
        { allowCreate: false },
      );
      assert.equal(specOf(object).priority, specOf(stored).priority);
      assert.equal(specOf(object).preemptionPolicy, 'PreemptLowerPriority');
    });
  });

  describe('LimitRanger', () => {
    const lrNs = 'limited';
    before(async () => {
      await make('/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: lrNs } });
      await make(
        '/v1/limitranges',
        {
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'limits' },
          spec: {
            limits: [
              {
                type: 'Container',
                default: { cpu: '500m', memory: '256Mi' },
                defaultRequest: { cpu: '100m' },
                max: { cpu: '1' },
                min: { cpu: '50m' },
              },
              { type: 'Pod', max: { memory: '1Gi' } },
              { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
            ],
          },
        },
        lrNs,
      );
    });

    it('fills missing requests and limits of containers and init containers and annotates the pod', async () => {
      const got = await create(
        pod('l1', {
          initContainers: [{ name: 'init', image: 'busybox:1.36' }],
          containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { memory: '64Mi' } } }],
        }),
        ['LimitRanger'],
        lrNs,
      );
      assert.deepEqual(containersOf(got)[0]!.resources, {
        limits: { cpu: '500m', memory: '256Mi' },
        requests: { cpu: '100m', memory: '64Mi' },
      });
      // the LimitRange's defaulting made memory's defaultRequest its default
      assert.deepEqual(containersOf(got, 'initContainers')[0]!.resources, {
        limits: { cpu: '500m', memory: '256Mi' },
        requests: { cpu: '100m', memory: '256Mi' },
      });
      assert.equal(
        got.metadata.annotations?.[limitRangerAnnotation],
        'LimitRanger plugin set: cpu request for container app; cpu, memory limit for container app; cpu, memory request for init container init; cpu, memory limit for init container init',
      );
      assert.equal((got.status as Json).qosClass, 'Burstable');
    });

    it('refuses containers and pods outside min/max (several violations in one message)', async () => {
      const one = await statusOf(
        create(
          pod('l2', { containers: [{ name: 'app', image: 'nginx:1.27', resources: { limits: { cpu: '2' } } }] }),
          ['LimitRanger'],
          lrNs,
        ),
      );
      assert.equal(one.code, 403);
      assert.equal(one.message, 'pods "l2" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
      const small = await statusOf(
        create(
          pod('l3', { containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { cpu: '10m' } } }] }),
          ['LimitRanger'],
          lrNs,
        ),
      );
      assert.equal(small.message, 'pods "l3" is forbidden: minimum cpu usage per Container is 50m, but request is 10m');
      const big = await statusOf(
        create(
          pod('l4', {
            containers: [
              { name: 'a', image: 'nginx:1.27', resources: { limits: { memory: '768Mi' } } },
              { name: 'b', image: 'nginx:1.27', resources: { limits: { memory: '512Mi' } } },
            ],
          }),
          ['LimitRanger'],
          lrNs,
        ),
      );
      assert.equal(big.message, 'pods "l4" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1280Mi');
      const both = await statusOf(
        create(
          pod('l5', {
            containers: [
              { name: 'a', image: 'nginx:1.27', resources: { limits: { cpu: '2', memory: '600Mi' } } },
              { name: 'b', image: 'nginx:1.27', resources: { requests: { cpu: '10m' }, limits: { memory: '600Mi' } } },
            ],
          }),
          ['LimitRanger'],
          lrNs,
        ),
      );
      assert.equal(
        both.message,
        'pods "l5" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, minimum cpu usage per Container is 50m, but request is 10m, maximum memory usage per Pod is 1Gi, but limit is 1200Mi]',
      );
    });

    it('checks claims against the PersistentVolumeClaim item', async () => {
      const claim = (name: string, storage: string): KubeObject => ({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
      });
      await create(claim('c1', '5Gi'), ['LimitRanger'], lrNs);
      const big = await statusOf(create(claim('c2', '20Gi'), ['LimitRanger'], lrNs));
      assert.equal(
        big.message,
        'persistentvolumeclaims "c2" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi',
      );
      const small = await statusOf(create(claim('c3', '500Mi'), ['LimitRanger'], lrNs));
      assert.equal(
        small.message,
        'persistentvolumeclaims "c3" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
      );
    });

    it('maxLimitRequestRatio', async () => {
      await make(
        '/v1/limitranges',
        {
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'ratio' },
          spec: { limits: [{ type: 'Container', maxLimitRequestRatio: { memory: '2' } }] },
        },
        ns,
      );
      const err = await statusOf(
        create(
          pod('r1', {
            containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { memory: '100Mi' }, limits: { memory: '300Mi' } } }],
          }),
          ['LimitRanger'],
        ),
      );
      assert.equal(
        err.message,
        'pods "r1" is forbidden: memory max limit to request ratio per Container is 2, but provided ratio is 3.000000',
      );
      await h.rest('', 'v1', 'limitranges').delete(ctx(ns), 'ratio', {});
    });
  });

  describe('RuntimeClass', () => {
    before(async () => {
      await make('node.k8s.io/v1/runtimeclasses', {
        apiVersion: 'node.k8s.io/v1',
        kind: 'RuntimeClass',
        metadata: { name: 'gvisor' },
        handler: 'runsc',
        overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
        scheduling: { nodeSelector: { sandbox: 'gvisor' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
      });
    });

    it('sets the overhead and merges the scheduling constraints', async () => {
      const got = await create(pod('rc1', { runtimeClassName: 'gvisor', nodeSelector: { disk: 'ssd' } }), ['RuntimeClass']);
      assert.deepEqual(specOf(got).overhead, { cpu: '250m', memory: '120Mi' });
      assert.deepEqual(specOf(got).nodeSelector, { disk: 'ssd', sandbox: 'gvisor' });
      assert.deepEqual(specOf(got).tolerations, [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }]);
    });

    it('refuses an unknown class, a conflicting node selector and a foreign overhead', async () => {
      const missing = await statusOf(create(pod('rc2', { runtimeClassName: 'kata' }), ['RuntimeClass']));
      assert.equal(missing.code, 403);
      assert.equal(missing.message, 'pods "rc2" is forbidden: pod rejected: RuntimeClass "kata" not found');
      const conflict = await statusOf(
        create(pod('rc3', { runtimeClassName: 'gvisor', nodeSelector: { sandbox: 'none' } }), ['RuntimeClass']),
      );
      assert.equal(
        conflict.message,
        'pods "rc3" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = none',
      );
      const overhead = await statusOf(create(pod('rc4', { runtimeClassName: 'gvisor', overhead: { cpu: '1' } }), ['RuntimeClass']));
      assert.equal(
        overhead.message,
        "pods \"rc4\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
      );
      const without = await statusOf(create(pod('rc5', { overhead: { cpu: '1' } }), ['RuntimeClass']));
      assert.equal(
        without.message,
        'pods "rc5" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
      );
    });
  });

  it('all together: a pod gets its account, token volume, priority and default tolerations', async () => {
    const got = await create(pod('all'), ['LimitRanger', 'ServiceAccount', 'Priority', 'DefaultTolerationSeconds', 'RuntimeClass']);
    const spec = specOf(got);
    assert.equal(spec.serviceAccountName, 'default');
    assert.equal(spec.priority, 0);
    assert.deepEqual(spec.tolerations, [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    // what the plugins added sits where kube's field order has it
    const keys = Object.keys(spec);
    assert.deepEqual(
      keys,
      podSpecOrder.filter((k) => keys.includes(k)),
    );
    const ckeys = Object.keys(containersOf(got)[0]!);
    assert.deepEqual(
      ckeys,
      containerOrder.filter((k) => ckeys.includes(k)),
    );
    assert.ok(ckeys.indexOf('volumeMounts') < ckeys.indexOf('terminationMessagePath'));
  });
});
