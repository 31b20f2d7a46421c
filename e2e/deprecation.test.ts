// Deprecated APIs and flags, as kube-apiserver 1.33 reports them, seen with kubectl 1.33 (and 1.27 for Endpoints): v1
// Endpoints and ComponentStatus, an enabled beta version with a planned removal
// (admissionregistration.k8s.io/v1beta1), and a CRD version marked deprecated (its own text
// and kube's default one) print `Warning: ...`; the audit log carries `k8s.io/deprecated` and
// `k8s.io/removed-release`; /metrics carries apiserver_requested_deprecated_apis; deprecated
// flags print pflag's notice at start-up.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources:
  - group: ""
    resources: ["endpoints"]
  - group: "admissionregistration.k8s.io"
  - group: "deprecation.example.com"
- level: None
`;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.deprecation.example.com
spec:
  group: deprecation.example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
  - name: v1
    served: true
    storage: true
    schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    deprecationWarning: "deprecation.example.com/v1beta1 Widget is going away; use v1"
    schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
  - name: v1alpha1
    served: true
    storage: false
    deprecated: true
    schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
`;

type AuditEvent = {
  stage: string;
  verb: string;
  objectRef?: { resource?: string; apiGroup?: string; apiVersion?: string };
  annotations?: Record<string, string>;
};

let kapi: KapiProcess;
let dir: string;
let auditLog: string;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-deprecation-'));
  const policy = path.join(dir, 'policy.yaml');
  writeFileSync(policy, POLICY);
  auditLog = path.join(dir, 'audit.log');
  kapi = await startKapi({
    extraArgs: [
      '--audit-policy-file',
      policy,
      '--audit-log-path',
      auditLog,
      '--runtime-config',
      'admissionregistration.k8s.io/v1beta1=true',
      '--apiserver-count=1',
      '--default-watch-cache-size',
      '100',
    ],
  });
});

after(async () => {
  await kapi?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function auditEvents(): AuditEvent[] {
  if (!existsSync(auditLog)) return [];
  return readFileSync(auditLog, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditEvent);
}

test("deprecated flags print pflag's notice at start-up", () => {
  const logs = kapi.logs();
  assert.match(
    logs,
    /^Flag --apiserver-count has been deprecated, apiserver-count is deprecated and will be removed in a future version\.$/m,
  );
  assert.match(
    logs,
    /^Flag --default-watch-cache-size has been deprecated, watch caches are sized automatically and this flag will be removed in a future version$/m,
  );
  assert.doesNotMatch(logs, /Flag --runtime-config has been deprecated/);
});

test('v1 Endpoints and ComponentStatus warn as kube 1.33 does; EndpointSlices do not', async () => {
  const opts = { kubeconfig: kapi.kubeconfig };
  const eps = await kubectl(['get', 'endpoints', '-n', 'default'], opts);
  assert.equal(eps.code, 0, eps.stderr);
  assert.match(eps.stderr, /^Warning: v1 Endpoints is deprecated in v1\.33\+; use discovery\.k8s\.io\/v1 EndpointSlice$/m);
  assert.match(eps.stdout, /kubernetes/);

  const older = await kubectl(['get', 'endpoints', '-n', 'default'], { ...opts, version: '1.27' });
  assert.equal(older.code, 0, older.stderr);
  assert.match(older.stderr, /Warning: v1 Endpoints is deprecated in v1\.33\+; use discovery\.k8s\.io\/v1 EndpointSlice/);

  const cs = await kubectl(['get', 'componentstatuses'], opts);
  assert.match(cs.stderr, /^Warning: v1 ComponentStatus is deprecated in v1\.19\+$/m);

  const slices = await kubectl(['get', 'endpointslices', '-n', 'default'], opts);
  assert.equal(slices.code, 0, slices.stderr);
  assert.doesNotMatch(slices.stderr, /Warning/);

  // a 404 is answered at the route too: it warns as well
  const missing = await kubectl(['get', 'endpoints', 'no-such-endpoints', '-n', 'default'], opts);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /Warning: v1 Endpoints is deprecated in v1\.33\+/);

  const create = await kubectl(['create', '-f', '-'], {
    ...opts,
    input: JSON.stringify({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: uniqueName('ep'), namespace: 'default' } }),
  });
  assert.equal(create.code, 0, create.stderr);
  assert.match(create.stderr, /Warning: v1 Endpoints is deprecated in v1\.33\+; use discovery\.k8s\.io\/v1 EndpointSlice/);
});

test('a beta version with a planned removal: warning and k8s.io/removed-release', async () => {
  const opts = { kubeconfig: kapi.kubeconfig };
  const r = await kubectl(['get', 'validatingadmissionpolicies.v1beta1.admissionregistration.k8s.io'], opts);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /^Warning: admissionregistration\.k8s\.io\/v1beta1 ValidatingAdmissionPolicy is deprecated in v1\.31\+, unavailable in v1\.34\+$/m,
  );
  const v1 = await kubectl(['get', 'validatingadmissionpolicies.v1.admissionregistration.k8s.io'], opts);
  assert.doesNotMatch(v1.stderr, /Warning/);

  const events = await waitFor(
    'the v1beta1 audit event',
    () => {
      const found = auditEvents().filter(
        (e) =>
          e.stage === 'ResponseComplete' && e.objectRef?.apiVersion === 'v1beta1' && e.objectRef.resource === 'validatingadmissionpolicies',
      );
      return found.length > 0 ? found : undefined;
    },
    15_000,
  );
  assert.equal(events[0]!.annotations?.['k8s.io/deprecated'], 'true');
  assert.equal(events[0]!.annotations?.['k8s.io/removed-release'], '1.34');
  const endpoints = auditEvents().filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.resource === 'endpoints');
  assert.ok(endpoints.length > 0);
  for (const e of endpoints) {
    assert.equal(e.annotations?.['k8s.io/deprecated'], 'true');
    assert.equal(e.annotations?.['k8s.io/removed-release'], undefined);
  }
  const v1Events = auditEvents().filter((e) => e.objectRef?.apiVersion === 'v1' && e.objectRef.resource === 'validatingadmissionpolicies');
  for (const e of v1Events) assert.equal(e.annotations?.['k8s.io/deprecated'], undefined);
});

test("CRD versions marked deprecated warn with their text or kube's default", async () => {
  const opts = { kubeconfig: kapi.kubeconfig };
  await kubectlOk(['apply', '-f', '-'], { ...opts, input: CRD });
  await kubectlOk(['wait', '--for=condition=Established', 'crd/widgets.deprecation.example.com', '--timeout=60s'], opts);
  const name = uniqueName('w');
  const created = await waitFor(
    'a v1beta1 Widget',
    async () => {
      const r = await kubectl(['create', '-f', '-'], {
        ...opts,
        input: JSON.stringify({ apiVersion: 'deprecation.example.com/v1beta1', kind: 'Widget', metadata: { name, namespace: 'default' } }),
      });
      return r.code === 0 ? r : undefined;
    },
    30_000,
  );
  assert.match(created.stderr, /^Warning: deprecation\.example\.com\/v1beta1 Widget is going away; use v1$/m);

  const alpha = await kubectl(['get', 'widgets.v1alpha1.deprecation.example.com', name, '-n', 'default'], opts);
  assert.equal(alpha.code, 0, alpha.stderr);
  assert.match(alpha.stderr, /^Warning: deprecation\.example\.com\/v1alpha1 Widget is deprecated$/m);

  const v1 = await kubectl(['get', 'widgets.v1.deprecation.example.com', name, '-n', 'default'], opts);
  assert.equal(v1.code, 0, v1.stderr);
  assert.doesNotMatch(v1.stderr, /Warning/);

  const crEvents = await waitFor(
    'the Widget audit events',
    () => {
      const found = auditEvents().filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.apiGroup === 'deprecation.example.com');
      return found.length >= 3 ? found : undefined;
    },
    15_000,
  );
  for (const e of crEvents) {
    const deprecated = e.objectRef?.apiVersion !== 'v1';
    assert.equal(e.annotations?.['k8s.io/deprecated'], deprecated ? 'true' : undefined, JSON.stringify(e));
    assert.equal(e.annotations?.['k8s.io/removed-release'], undefined);
  }
});

test('apiserver_requested_deprecated_apis names what was requested', async () => {
  const metrics = await kubectlOk(['get', '--raw', '/metrics'], { kubeconfig: kapi.kubeconfig });
  const lines = metrics.split('\n').filter((l) => l.startsWith('apiserver_requested_deprecated_apis{'));
  const has = (labels: string) => lines.some((l) => l === `apiserver_requested_deprecated_apis{${labels}} 1`);
  assert.ok(has('group="",version="v1",resource="endpoints",subresource="",removed_release=""'), lines.join('\n'));
  assert.ok(has('group="",version="v1",resource="componentstatuses",subresource="",removed_release=""'), lines.join('\n'));
  assert.ok(
    has(
      'group="admissionregistration.k8s.io",version="v1beta1",resource="validatingadmissionpolicies",subresource="",removed_release="1.34"',
    ),
    lines.join('\n'),
  );
  assert.ok(
    has('group="deprecation.example.com",version="v1beta1",resource="widgets",subresource="",removed_release=""'),
    lines.join('\n'),
  );
  assert.ok(!lines.some((l) => l.includes('resource="endpointslices"')));
  assert.match(metrics, /# HELP apiserver_requested_deprecated_apis \[STABLE\]/);
});
