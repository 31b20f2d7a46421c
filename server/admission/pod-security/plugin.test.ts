// The plugin on its own, over a small in-memory stand-in for the registry (namespaces and
// pods by name); e2e/pod-security.test.ts runs it inside kapi behind kubectl.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import { StatusError } from '../../machinery/status.js';
import type { AdmissionAttributes, RESTResource, ResourceResolver } from '../../registry/rest.js';
import type { AdmissionRequestContext } from '../plugin.js';
import { podSecurityFactory } from './plugin.js';

function info(group: string, resource: string, kind: string): ResourceInfo {
  return { group, version: 'v1', resource, kind } as ResourceInfo;
}

function fakeResolver(namespaces: KubeObject[], pods: KubeObject[]): ResourceResolver {
  const resources: Record<string, Partial<RESTResource>> = {
    namespaces: {
      get: async (_ctx, name) => {
        const ns = namespaces.find((n) => n.metadata.name === name);
        if (!ns) throw new Error(`namespace ${name} not found`);
        return ns;
      },
    },
    pods: {
      list: async (ctx) => ({
        apiVersion: 'v1',
        kind: 'PodList',
        metadata: { resourceVersion: '1' },
        items: pods.filter((p) => p.metadata.namespace === ctx.namespace),
      }),
    },
  };
  return {
    lookup: (_g, _v, resource) => resources[resource] as RESTResource | undefined,
    all: () => [],
  };
}

function ns(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

function pod(name: string, namespace: string, spec: Record<string, unknown>, owner?: string): KubeObject {
  const metadata: KubeObject['metadata'] = { name, namespace };
  if (owner) metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: owner, controller: true }];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

const plainSpec = { containers: [{ name: 'nginx', image: 'nginx' }] };
const restrictedSpec = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'nginx', image: 'nginx', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
};
const privilegedSpec = { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] };

function attrs(
  operation: 'CREATE' | 'UPDATE',
  resource: ResourceInfo,
  namespace: string,
  object: KubeObject,
  oldObject: KubeObject | null = null,
  username = 'alice',
  subresource?: string,
): AdmissionAttributes {
  return {
    operation,
    resource,
    subresource,
    namespace,
    name: object.metadata.name ?? '',
    object,
    oldObject,
    dryRun: false,
    user: { username, groups: [] },
  };
}

const PODS = info('', 'pods', 'Pod');
const NAMESPACES = info('', 'namespaces', 'Namespace');
const DEPLOYMENTS = info('apps', 'deployments', 'Deployment');

async function setup(namespaces: KubeObject[], pods: KubeObject[] = [], config?: unknown, gates: Record<string, boolean> = {}) {
  const plugin = await podSecurityFactory.create(
    { resolver: fakeResolver(namespaces, pods), signal: new AbortController().signal, featureGates: gates, log: () => {} },
    config,
  );
  const run = async (a: AdmissionAttributes) => {
    const ctx: AdmissionRequestContext = { warnings: [], auditAnnotations: {} };
    let error: StatusError | undefined;
    try {
      if (plugin.handles && !plugin.handles(a)) return { ctx, error, handled: false };
      await plugin.validate!(a, ctx);
    } catch (err) {
      if (!(err instanceof StatusError)) throw err;
      error = err;
    }
    return { ctx, error, handled: true };
  };
  return { plugin, run };
}

describe('PodSecurity plugin: pods', () => {
  it('enforce=restricted refuses a plain pod with kube message and admits a compliant one', async () => {
    const { run } = await setup([ns('r', { 'pod-security.kubernetes.io/enforce': 'restricted' })]);
    const refused = await run(attrs('CREATE', PODS, 'r', pod('nginx', 'r', plainSpec)));
    assert.equal(refused.error?.code, 403);
    assert.equal(
      refused.error?.message,
      'pods "nginx" is forbidden: violates PodSecurity "restricted:latest": ' +
        'allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    assert.deepEqual(refused.ctx.warnings, [], 'no warnings on a refused request');
    assert.equal(refused.ctx.auditAnnotations['pod-security.kubernetes.io/enforce-policy'], 'restricted:latest');
    const ok = await run(attrs('CREATE', PODS, 'r', pod('good', 'r', restrictedSpec)));
    assert.equal(ok.error, undefined);
    assert.deepEqual(ok.ctx.auditAnnotations, { 'pod-security.kubernetes.io/enforce-policy': 'restricted:latest' });
  });

  it('warn and audit without enforce', async () => {
    const { run } = await setup([
      ns('w', {
        'pod-security.kubernetes.io/warn': 'baseline',
        'pod-security.kubernetes.io/audit': 'restricted',
        'pod-security.kubernetes.io/audit-version': 'v1.30',
      }),
    ]);
    const r = await run(attrs('CREATE', PODS, 'w', pod('p', 'w', privilegedSpec)));
    assert.equal(r.error, undefined);
    assert.deepEqual(r.ctx.warnings, [
      'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    ]);
    assert.match(
      r.ctx.auditAnnotations['pod-security.kubernetes.io/audit-violations'] ?? '',
      /^would violate PodSecurity "restricted:v1.30": privileged \(/,
    );
    assert.equal(r.ctx.auditAnnotations['pod-security.kubernetes.io/enforce-policy'], 'privileged:latest');
  });

  it('fully privileged namespaces, ignored subresources and insignificant updates are not evaluated', async () => {
    const { run } = await setup([ns('p'), ns('r', { 'pod-security.kubernetes.io/enforce': 'restricted' })]);
    const priv = await run(attrs('CREATE', PODS, 'p', pod('x', 'p', privilegedSpec)));
    assert.deepEqual(priv.ctx.auditAnnotations, { 'pod-security.kubernetes.io/enforce-policy': 'privileged:latest' });
    const status = await run(attrs('UPDATE', PODS, 'r', pod('x', 'r', plainSpec), pod('x', 'r', plainSpec), 'alice', 'status'));
    assert.equal(status.error, undefined);
    const labelsOnly = pod('x', 'r', plainSpec);
    labelsOnly.metadata.labels = { a: 'b' };
    assert.equal((await run(attrs('UPDATE', PODS, 'r', labelsOnly, pod('x', 'r', plainSpec)))).error, undefined);
    const newImage = pod('x', 'r', { containers: [{ name: 'nginx', image: 'nginx:2' }] });
    assert.equal((await run(attrs('UPDATE', PODS, 'r', newImage, pod('x', 'r', plainSpec)))).error?.code, 403);
  });

  it('an added ephemeral container is evaluated', async () => {
    const { run } = await setup([ns('b', { 'pod-security.kubernetes.io/enforce': 'baseline' })]);
    const old = pod('x', 'b', plainSpec);
    const withDebug = pod('x', 'b', {
      ...plainSpec,
      ephemeralContainers: [{ name: 'debug', image: 'busybox', securityContext: { privileged: true } }],
    });
    const r = await run(attrs('UPDATE', PODS, 'b', withDebug, old, 'alice', 'ephemeralcontainers'));
    assert.equal(
      r.error?.message,
      'pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "debug" must not set securityContext.privileged=true)',
    );
  });

  it('exemptions: usernames, namespaces, runtime classes', async () => {
    const config = {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline' },
      exemptions: { usernames: ['bob'], namespaces: ['ex'], runtimeClasses: ['kata'] },
    };
    const { run } = await setup([ns('d'), ns('ex')], [], config);
    const byDefault = await run(attrs('CREATE', PODS, 'd', pod('x', 'd', privilegedSpec)));
    assert.match(byDefault.error?.message ?? '', /violates PodSecurity "baseline:latest": privileged/);
    const user = await run(attrs('CREATE', PODS, 'd', pod('x', 'd', privilegedSpec), null, 'bob'));
    assert.deepEqual([user.error, user.ctx.auditAnnotations], [undefined, { 'pod-security.kubernetes.io/exempt': 'user' }]);
    const nsExempt = await run(attrs('CREATE', PODS, 'ex', pod('x', 'ex', privilegedSpec)));
    assert.deepEqual(nsExempt.ctx.auditAnnotations, { 'pod-security.kubernetes.io/exempt': 'namespace' });
    const rc = await run(attrs('CREATE', PODS, 'd', pod('x', 'd', { ...privilegedSpec, runtimeClassName: 'kata' })));
    assert.deepEqual([rc.error, rc.ctx.auditAnnotations], [undefined, { 'pod-security.kubernetes.io/exempt': 'runtimeClass' }]);
  });
});

describe('PodSecurity plugin: workloads', () => {
  it('pod templates get warnings and audit annotations but are never refused', async () => {
    const { run } = await setup([
      ns('r', { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'baseline' }),
    ]);
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'r' },
      spec: { template: { metadata: {}, spec: privilegedSpec } },
    };
    const r = await run(attrs('CREATE', DEPLOYMENTS, 'r', deployment));
    assert.equal(r.error, undefined);
    assert.deepEqual(r.ctx.warnings, [
      'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    ]);
    const cronjob: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'cj', namespace: 'r' },
      spec: {
        jobTemplate: {
          spec: { template: { spec: { containers: [{ name: 'c', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }] } } },
        },
      },
    };
    const cj = await run(attrs('CREATE', info('batch', 'cronjobs', 'CronJob'), 'r', cronjob));
    assert.match(cj.ctx.warnings[0] ?? '', /non-default capabilities \(container "c" must not include "SYS_ADMIN"/);
    const scale = await run(attrs('UPDATE', DEPLOYMENTS, 'r', deployment, deployment, 'alice', 'scale'));
    assert.deepEqual(scale.ctx.warnings, []);
  });

  it('other resources are not handled', async () => {
    const { run } = await setup([ns('r', { 'pod-security.kubernetes.io/enforce': 'restricted' })]);
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'r' } };
    assert.equal((await run(attrs('CREATE', info('', 'configmaps', 'ConfigMap'), 'r', cm))).handled, false);
  });
});

describe('PodSecurity plugin: namespaces', () => {
  it('invalid labels are refused on create and on an update that changes them', async () => {
    const { run } = await setup([]);
    const bad = ns('n', { 'pod-security.kubernetes.io/enforce': 'strict' });
    const created = await run(attrs('CREATE', NAMESPACES, '', bad));
    assert.equal(created.error?.code, 422);
    assert.equal(
      created.error?.message,
      'Namespace "n" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    );
    const updated = await run(attrs('UPDATE', NAMESPACES, 'n', bad, ns('n')));
    assert.equal(updated.error?.code, 422);
    // an unchanged bad label does not block other updates
    const unchanged = await run(attrs('UPDATE', NAMESPACES, 'n', bad, bad));
    assert.equal(unchanged.error, undefined);
  });

  it('tightening enforce warns about existing pods, one line per distinct violation', async () => {
    const pods = [
      pod('plain-b', 'x', plainSpec, 'rs1'),
      pod('plain-a', 'x', plainSpec, 'rs1'),
      pod('priv', 'x', privilegedSpec),
      pod('good', 'x', restrictedSpec),
      pod('other', 'y', privilegedSpec),
    ];
    const { run } = await setup([ns('x')], pods);
    const r = await run(attrs('UPDATE', NAMESPACES, 'x', ns('x', { 'pod-security.kubernetes.io/enforce': 'restricted' }), ns('x')));
    assert.equal(r.error, undefined);
    assert.deepEqual(r.ctx.warnings, [
      'existing pods in namespace "x" violate the new PodSecurity enforce level "restricted:latest"',
      'plain-a (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
      'priv: privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    ]);
    const baseline = await run(attrs('UPDATE', NAMESPACES, 'x', ns('x', { 'pod-security.kubernetes.io/enforce': 'baseline' }), ns('x')));
    assert.deepEqual(baseline.ctx.warnings, [
      'existing pods in namespace "x" violate the new PodSecurity enforce level "baseline:latest"',
      'priv: privileged',
    ]);
    // relaxing the level at the same version does not dry-run
    const relaxed = await run(
      attrs(
        'UPDATE',
        NAMESPACES,
        'x',
        ns('x', { 'pod-security.kubernetes.io/enforce': 'baseline' }),
        ns('x', { 'pod-security.kubernetes.io/enforce': 'restricted' }),
      ),
    );
    assert.deepEqual(relaxed.ctx.warnings, []);
  });

  it('labelling an exempt namespace warns that the policy is ignored', async () => {
    const config = {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      exemptions: { namespaces: ['ex'] },
    };
    const { run } = await setup([], [], config);
    const labelled = ns('ex', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted' });
    // a create has no request namespace for kube to match against the exemptions
    assert.deepEqual((await run(attrs('CREATE', NAMESPACES, '', labelled))).ctx.warnings, []);
    const r = await run(attrs('UPDATE', NAMESPACES, 'ex', labelled, ns('ex')));
    assert.deepEqual(r.ctx.warnings, [
      'namespace "ex" is exempt from Pod Security, and the policy (enforce=baseline:latest, warn=restricted:latest) will be ignored',
    ]);
  });
});
