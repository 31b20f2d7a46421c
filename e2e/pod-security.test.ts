// The PodSecurity admission plugin behind kubectl 1.33: a namespace labelled
// enforce=restricted refuses a plain nginx pod with kube's message and admits a compliant one;
// warn=baseline prints a warning for a privileged Deployment and still creates it; labelling a
// namespace whose pods break the new level prints kube's warnings; invalid labels are refused;
// the PodSecurityConfiguration's defaults and exemptions from --admission-control-config-file;
// pod updates are evaluated only when an image changes; the audit log carries the plugin's
// pod-security.kubernetes.io/* annotations.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';

/** a namespace whose default ServiceAccount exists (the ServiceAccount admission plugin
 *  refuses pods until the controller has created it) */
async function createNamespace(name: string, kc: { kubeconfig: string }): Promise<void> {
  await kubectlOk(['create', 'namespace', name], kc);
  await waitFor(
    `serviceaccount default in ${name}`,
    async () => (await kubectl(['get', 'serviceaccount', 'default', '-n', name], kc)).code === 0,
    60_000,
    200,
  );
}

const PLAIN_NGINX_MESSAGE =
  'violates PodSecurity "restricted:latest": ' +
  'allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

function compliantPod(name: string, namespace: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'nginx',
          image: 'nginx',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  });
}

function privilegedDeployment(name: string, namespace: string): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { hostNetwork: true, containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] },
      },
    },
  });
}

describe('PodSecurity admission with kubectl 1.33', () => {
  let kapi: KapiProcess;
  let kc: { kubeconfig: string };

  before(async () => {
    kapi = await startKapi();
    kc = { kubeconfig: kapi.kubeconfig };
  });
  after(async () => {
    await kapi?.stop();
  });

  it('enforce=restricted refuses a plain nginx pod with kube message and admits a compliant one', async () => {
    const ns = uniqueName('psa-r');
    await createNamespace(ns, kc);
    await kubectlOk(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted'], kc);
    const refused = await kubectl(['run', 'nginx', '--image=nginx', '-n', ns], kc);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.stderr.trim(), `Error from server (Forbidden): pods "nginx" is forbidden: ${PLAIN_NGINX_MESSAGE}`);
    const created = await kubectl(['create', '-f', '-'], { ...kc, input: compliantPod('good', ns) });
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout.trim(), 'pod/good created');
    assert.equal(created.stderr, '');
    // server-side dry run gives the same answer
    const dry = await kubectl(['run', 'nginx', '--image=nginx', '-n', ns, '--dry-run=server'], kc);
    assert.match(dry.stderr, /pods "nginx" is forbidden: violates PodSecurity "restricted:latest"/);
  });

  it('warn=baseline prints a warning for a privileged Deployment and creates it', async () => {
    const ns = uniqueName('psa-w');
    await createNamespace(ns, kc);
    await kubectlOk(['label', 'namespace', ns, 'pod-security.kubernetes.io/warn=baseline'], kc);
    const r = await kubectl(['create', '-f', '-'], { ...kc, input: privilegedDeployment('priv', ns) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'deployment.apps/priv created');
    assert.equal(
      r.stderr.trim(),
      'Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true), ' +
        'privileged (container "c" must not set securityContext.privileged=true)',
    );
    await kubectlOk(['get', 'deployment', 'priv', '-n', ns], kc);
    // enforce never refuses a workload, only warns (enforce raises warn to its level)
    const strict = uniqueName('psa-e');
    await createNamespace(strict, kc);
    await kubectlOk(['label', 'namespace', strict, 'pod-security.kubernetes.io/enforce=baseline'], kc);
    const d = await kubectl(['create', '-f', '-'], { ...kc, input: privilegedDeployment('priv', strict) });
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stderr, /^Warning: would violate PodSecurity "baseline:latest": host namespaces/);
  });

  it('labelling a namespace whose pods break the new level prints the warnings', async () => {
    const ns = uniqueName('psa-l');
    await createNamespace(ns, kc);
    await kubectlOk(['run', 'web', '--image=nginx', '-n', ns], kc);
    await kubectlOk(['create', '-f', '-'], { ...kc, input: compliantPod('good', ns) });
    const r = await kubectl(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted'], kc);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `namespace/${ns} labeled`);
    assert.deepEqual(r.stderr.trim().split('\n'), [
      `Warning: existing pods in namespace "${ns}" violate the new PodSecurity enforce level "restricted:latest"`,
      'Warning: web: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    ]);
    // the label is set anyway; the running pod stays
    const labels = await kubectlOk(['get', 'namespace', ns, '-o', 'jsonpath={.metadata.labels}'], kc);
    assert.match(labels, /"pod-security.kubernetes.io\/enforce":"restricted"/);
    await kubectlOk(['get', 'pod', 'web', '-n', ns], kc);
  });

  it('invalid label values are refused', async () => {
    const ns = uniqueName('psa-i');
    await createNamespace(ns, kc);
    const r = await kubectl(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=strict'], kc);
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr.trim(),
      `The Namespace "${ns}" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`,
    );
    const v = await kubectl(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce-version=1.30'], kc);
    assert.match(v.stderr, /Invalid value: "1.30": must be "latest" or "v1.x"/);
  });
});

describe('PodSecurity configuration from --admission-control-config-file', () => {
  let kapi: KapiProcess;
  let kc: { kubeconfig: string };
  let dir = '';
  let auditLog = '';

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'psa-cfg-'));
    const file = path.join(dir, 'admission.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: PodSecurity',
        '  configuration:',
        '    apiVersion: pod-security.admission.config.k8s.io/v1',
        '    kind: PodSecurityConfiguration',
        '    defaults:',
        '      enforce: baseline',
        '    exemptions:',
        '      namespaces: [exempt-ns]',
        '',
      ].join('\n'),
    );
    const policy = path.join(dir, 'audit-policy.yaml');
    writeFileSync(
      policy,
      [
        'apiVersion: audit.k8s.io/v1',
        'kind: Policy',
        'rules:',
        '- level: Metadata',
        '  resources:',
        '  - group: ""',
        '    resources: [pods]',
        '- level: None',
        '',
      ].join('\n'),
    );
    auditLog = path.join(dir, 'audit.log');
    kapi = await startKapi({
      extraArgs: [`--admission-control-config-file=${file}`, '--audit-policy-file', policy, '--audit-log-path', auditLog],
    });
    kc = { kubeconfig: kapi.kubeconfig };
  });
  after(async () => {
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the default level applies to unlabelled namespaces; exempt namespaces admit anything', async () => {
    const ns = uniqueName('psa-d');
    await createNamespace(ns, kc);
    // a workload is never refused, and the defaults' warn level stays privileged: no warning
    const r = await kubectl(['create', '-f', '-'], { ...kc, input: privilegedDeployment('x', ns) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const pod = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] },
    });
    const refused = await kubectl(['create', '-n', ns, '-f', '-'], { ...kc, input: pod });
    assert.equal(
      refused.stderr.trim(),
      'Error from server (Forbidden): error when creating "STDIN": pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    );
    await createNamespace('exempt-ns', kc);
    const exempt = await kubectl(['create', '-n', 'exempt-ns', '-f', '-'], { ...kc, input: pod });
    assert.equal(exempt.code, 0, exempt.stderr);
  });

  it('pod updates that change an image are evaluated, others are not; audit annotations are logged', async () => {
    const ns = uniqueName('psa-u');
    await createNamespace(ns, kc);
    await kubectlOk(['run', 'web', '--image=nginx', '-n', ns], kc);
    await kubectlOk(
      ['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/audit=restricted'],
      kc,
    );
    const relabel = await kubectl(['label', 'pod', 'web', '-n', ns, 'tier=front'], kc);
    assert.equal(relabel.code, 0, relabel.stderr);
    const setImage = await kubectl(['set', 'image', 'pod/web', 'web=nginx:1.27', '-n', ns], kc);
    assert.notEqual(setImage.code, 0);
    assert.match(setImage.stderr, /pods "web" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);

    const other = uniqueName('psa-a');
    await createNamespace(other, kc);
    await kubectlOk(['label', 'namespace', other, 'pod-security.kubernetes.io/audit=restricted'], kc);
    await kubectlOk(['run', 'audited', '--image=nginx', '-n', other], kc);
    const event = await waitFor(
      'the audit event of the pod create',
      () => {
        if (!existsSync(auditLog)) return undefined;
        return readFileSync(auditLog, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map(
            (l) =>
              JSON.parse(l) as {
                stage?: string;
                verb?: string;
                objectRef?: { namespace?: string; name?: string };
                annotations?: Record<string, string>;
              },
          )
          .find(
            (e) =>
              e.stage === 'ResponseComplete' && e.verb === 'create' && e.objectRef?.namespace === other && e.objectRef?.name === 'audited',
          );
      },
      60_000,
      200,
    );
    assert.equal(event.annotations?.['pod-security.kubernetes.io/enforce-policy'], 'baseline:latest');
    assert.match(
      event.annotations?.['pod-security.kubernetes.io/audit-violations'] ?? '',
      /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "audited" must set/,
    );
  });
});
