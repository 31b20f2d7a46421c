// Admission webhooks with kubectl 1.33 against a real kapi and a loopback HTTPS webhook server
// (its own CA, given as caBundle): a mutating webhook adds a label by JSONPatch and sends a
// warning kubectl prints; a validating webhook denies by a condition with kube's message;
// namespaceSelector, objectSelector and matchConditions decide who is called; failurePolicy
// Ignore vs Fail against a webhook that is down; a slow webhook is cut at timeoutSeconds; a
// webhook with sideEffects Unknown refused by v1 validation (so no stored webhook can refuse
// a dry run) and a server-side dry run through one with None; pods and custom
// resources mutated too; the
// AdmissionReview fields; --disable-admission-plugins=MutatingAdmissionWebhook turns the
// mutation off; unknown and overlapping plugin names stop start-up; the audit event carries
// the webhooks' annotations; a configuration written through one replica applies on another.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { freePort, kubectl, kubectlOk, startEtcd, startKapi, waitFor, type KapiProcess } from './harness.js';

interface Seen {
  path: string;
  request: Record<string, any>;
}

interface WebhookServer {
  port: number;
  caBundle: string;
  seen: Seen[];
  close(): Promise<void>;
}

/** answers /mutate (label mutated=yes), /validate (denies data key "forbidden") and /slow
 *  (answers after 5 s) */
async function startWebhookServer(): Promise<WebhookServer> {
  const caKey = await generateKey('ecdsa');
  const ca = await createCA('admission-webhook-ca', 1, caKey);
  const serverKey = await generateKey('ecdsa');
  const serverCert = await issueCert(ca, { commonName: '127.0.0.1', sans: ['127.0.0.1'], usage: 'server', validDays: 1 }, serverKey);
  const port = await freePort();
  const seen: Seen[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = https.createServer({ cert: serverCert, key: serverKey.privateKeyPem }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://x');
      const review = JSON.parse(body) as { request: Record<string, any> };
      const request = review.request;
      seen.push({ path: url.pathname, request });
      const obj = request.object ?? {};
      const response: Record<string, unknown> = { uid: request.uid, allowed: true };
      if (url.pathname === '/mutate') {
        const patch = obj.metadata?.labels
          ? [{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }]
          : [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }];
        response.patchType = 'JSONPatch';
        response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
        response.warnings = [`mutated ${obj.metadata?.name ?? obj.metadata?.generateName ?? ''}`];
      } else if (url.pathname === '/validate') {
        if (obj.data && 'forbidden' in obj.data) {
          response.allowed = false;
          response.status = { code: 403, reason: 'Forbidden', message: 'data key "forbidden" is not allowed' };
        }
      }
      const answer = () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      };
      if (url.pathname === '/slow') {
        const t = setTimeout(() => {
          timers.delete(t);
          answer();
        }, 5000);
        timers.add(t);
      } else {
        answer();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    seen,
    close: () =>
      new Promise((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface HookOptions {
  name: string;
  url: string;
  caBundle: string;
  resources?: string[];
  failurePolicy?: 'Ignore' | 'Fail';
  sideEffects?: string;
  timeoutSeconds?: number;
  namespaceSelector?: Record<string, unknown>;
  objectSelector?: Record<string, unknown>;
  matchConditions?: { name: string; expression: string }[];
}

function hook(o: HookOptions): Record<string, unknown> {
  const h: Record<string, unknown> = {
    name: o.name,
    clientConfig: { url: o.url, caBundle: o.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: o.resources ?? ['configmaps'] }],
    failurePolicy: o.failurePolicy ?? 'Fail',
    sideEffects: o.sideEffects ?? 'None',
    admissionReviewVersions: ['v1'],
  };
  if (o.timeoutSeconds !== undefined) h.timeoutSeconds = o.timeoutSeconds;
  if (o.namespaceSelector) h.namespaceSelector = o.namespaceSelector;
  if (o.objectSelector) h.objectSelector = o.objectSelector;
  if (o.matchConditions) h.matchConditions = o.matchConditions;
  return h;
}

function configuration(
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration',
  name: string,
  hooks: Record<string, unknown>[],
): string {
  return JSON.stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks: hooks });
}

function configMap(
  ns: string,
  name: string,
  opts: { labels?: Record<string, string>; annotations?: Record<string, string>; data?: Record<string, string> } = {},
): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, labels: opts.labels, annotations: opts.annotations },
    data: opts.data ?? { a: '1' },
  });
}

describe('admission webhooks', { timeout: 600_000 }, () => {
  let kapi: KapiProcess;
  let hooks: WebhookServer;
  let deadPort: number;
  const k = (args: string[], input?: string) => kubectl(args, { kubeconfig: kapi.kubeconfig, input });
  const kOk = (args: string[], input?: string) => kubectlOk(args, { kubeconfig: kapi.kubeconfig, input });
  const labelsOf = async (ns: string, kind: string, name: string) =>
    JSON.parse((await kOk(['get', kind, name, '-n', ns, '-o', 'jsonpath={.metadata.labels}'])) || '{}') as Record<string, string>;

  const dir = mkdtempSync(path.join(os.tmpdir(), 'adm-webhooks-'));
  const auditLog = path.join(dir, 'audit.log');
  /** the ResponseComplete audit events of configmap creates */
  const createEvents = () =>
    readFileSync(auditLog, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, any>)
      .filter((e) => e.stage === 'ResponseComplete' && e.verb === 'create' && e.objectRef?.resource === 'configmaps');

  before(async () => {
    hooks = await startWebhookServer();
    deadPort = await freePort();
    const policy = path.join(dir, 'policy.yaml');
    writeFileSync(
      policy,
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - group: ""\n    resources: ["configmaps"]\n',
    );
    kapi = await startKapi({ extraArgs: ['--audit-policy-file', policy, '--audit-log-path', auditLog] });
    await kOk(['create', 'namespace', 'adm-on']);
    await kOk(['label', 'namespace', 'adm-on', 'webhooks=on']);
    await kOk(['create', 'namespace', 'adm-off']);
    const base = `https://127.0.0.1:${hooks.port}`;
    const dead = `https://127.0.0.1:${deadPort}`;
    await kOk(
      ['apply', '-f', '-'],
      configuration('MutatingWebhookConfiguration', 'add-label', [
        hook({
          name: 'label.example.com',
          url: `${base}/mutate`,
          caBundle: hooks.caBundle,
          resources: ['configmaps', 'pods'],
          namespaceSelector: { matchLabels: { webhooks: 'on' } },
          objectSelector: { matchExpressions: [{ key: 'skip-mutation', operator: 'DoesNotExist' }] },
        }),
      ]),
    );
    await kOk(
      ['apply', '-f', '-'],
      configuration('ValidatingWebhookConfiguration', 'deny-forbidden', [
        hook({
          name: 'deny.example.com',
          url: `${base}/validate`,
          caBundle: hooks.caBundle,
          matchConditions: [
            { name: 'not-skipped', expression: "!has(object.metadata.annotations) || !('skip-validation' in object.metadata.annotations)" },
          ],
        }),
        hook({
          name: 'dead-ignore.example.com',
          url: `${dead}/validate`,
          caBundle: hooks.caBundle,
          failurePolicy: 'Ignore',
          objectSelector: { matchLabels: { dead: 'ignore' } },
        }),
        hook({
          name: 'dead-fail.example.com',
          url: `${dead}/validate`,
          caBundle: hooks.caBundle,
          failurePolicy: 'Fail',
          objectSelector: { matchLabels: { dead: 'fail' } },
        }),
        hook({
          name: 'slow.example.com',
          url: `${base}/slow`,
          caBundle: hooks.caBundle,
          timeoutSeconds: 1,
          objectSelector: { matchLabels: { slow: 'yes' } },
        }),
      ]),
    );
    // the configurations reach the chain through a watch: wait until both are in effect
    await waitFor(
      'the mutating webhook in effect',
      async () => {
        const r = await k([
          'create',
          'configmap',
          'probe',
          '-n',
          'adm-on',
          '--dry-run=server',
          '-o',
          'jsonpath={.metadata.labels.mutated}',
        ]);
        return r.code === 0 && r.stdout === 'yes';
      },
      30_000,
      200,
    );
    await waitFor(
      'the validating webhooks in effect',
      async () => {
        const r = await k(['create', 'configmap', 'probe', '-n', 'adm-on', '--from-literal=forbidden=1', '--dry-run=server']);
        return r.code !== 0 && r.stderr.includes('denied the request');
      },
      30_000,
      200,
    );
  });

  after(async () => {
    await kapi?.stop();
    await hooks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a mutating webhook adds a label by JSONPatch and its warning reaches kubectl', async () => {
    const r = await k(['create', 'configmap', 'cm1', '-n', 'adm-on', '--from-literal=a=1']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Warning: mutated cm1/);
    assert.equal((await labelsOf('adm-on', 'configmap', 'cm1')).mutated, 'yes');
    // what the webhook was sent
    const req = hooks.seen.filter((s) => s.path === '/mutate' && s.request.name === 'cm1').at(-1)!.request;
    assert.match(req.uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(req.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(req.resource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.deepEqual(req.requestKind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(req.requestResource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.equal(req.namespace, 'adm-on');
    assert.equal(req.operation, 'CREATE');
    assert.equal(req.dryRun, false);
    assert.equal(req.oldObject, null);
    assert.equal(req.object.data.a, '1');
    assert.equal(req.options.kind, 'CreateOptions');
    assert.equal(req.options.fieldManager, 'kubectl-create');
    assert.ok(req.userInfo.username, 'userInfo.username');
    assert.ok(req.userInfo.groups.includes('system:masters'));
    // the audit event records which webhook mutated the object
    await waitFor('the audit event of cm1', () => createEvents().some((e) => e.objectRef.name === 'cm1'), 30_000, 200);
    const ev = createEvents().find((e) => e.objectRef.name === 'cm1')!;
    assert.equal(
      ev.annotations['mutation.webhook.admission.k8s.io/round_0_index_0'],
      JSON.stringify({ configuration: 'add-label', webhook: 'label.example.com', mutated: true }),
    );
  });

  it('an update goes to the webhooks with the old object', async () => {
    await kOk(['label', 'configmap', 'cm1', '-n', 'adm-on', 'extra=1']);
    const req = hooks.seen
      .filter((s) => s.path === '/mutate' && s.request.name === 'cm1' && s.request.operation === 'UPDATE')
      .at(-1)!.request;
    assert.equal(req.oldObject.metadata.labels.mutated, 'yes');
    assert.equal(req.options.kind, 'UpdateOptions');
  });

  it('namespaceSelector and objectSelector leave other objects alone', async () => {
    await kOk(['create', 'configmap', 'cm-off', '-n', 'adm-off', '--from-literal=a=1']);
    assert.equal((await labelsOf('adm-off', 'configmap', 'cm-off')).mutated, undefined);
    await kOk(['create', '-f', '-'], configMap('adm-on', 'cm-skip', { labels: { 'skip-mutation': 'true' } }));
    assert.deepEqual(await labelsOf('adm-on', 'configmap', 'cm-skip'), { 'skip-mutation': 'true' });
  });

  it("a validating webhook denies with kube's message; matchConditions skip it", async () => {
    const r = await k(['create', 'configmap', 'cm-bad', '-n', 'adm-off', '--from-literal=forbidden=1']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /admission webhook "deny\.example\.com" denied the request: data key "forbidden" is not allowed/);
    assert.match((await k(['get', 'configmap', 'cm-bad', '-n', 'adm-off'])).stderr, /NotFound|not found/);
    await kOk(
      ['create', '-f', '-'],
      configMap('adm-off', 'cm-skipped', { annotations: { 'skip-validation': 'yes' }, data: { forbidden: '1' } }),
    );
  });

  it('failurePolicy: Ignore lets the request through when the webhook is down, Fail refuses it', async () => {
    await kOk(['create', '-f', '-'], configMap('adm-off', 'cm-ignore', { labels: { dead: 'ignore' } }));
    await waitFor('the audit event of cm-ignore', () => createEvents().some((e) => e.objectRef.name === 'cm-ignore'), 30_000, 200);
    const ev = createEvents().find((e) => e.objectRef.name === 'cm-ignore')!;
    assert.ok(
      Object.entries(ev.annotations).some(
        ([k, v]) => k.startsWith('failed-open.validating.webhook.admission.k8s.io/round_0_index_') && v === 'dead-ignore.example.com',
      ),
      JSON.stringify(ev.annotations),
    );
    const r = await k(['create', '-f', '-'], configMap('adm-off', 'cm-fail', { labels: { dead: 'fail' } }));
    assert.notEqual(r.code, 0);
    assert.ok(
      r.stderr.includes(
        `Internal error occurred: failed calling webhook "dead-fail.example.com": failed to call webhook: Post "https://127.0.0.1:${deadPort}/validate?timeout=10s": dial tcp 127.0.0.1:${deadPort}: connect: connection refused`,
      ),
      r.stderr,
    );
  });

  it('a slow webhook is cut at its timeoutSeconds', async () => {
    const r = await k(['create', '-f', '-'], configMap('adm-off', 'cm-slow', { labels: { slow: 'yes' } }));
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /failed calling webhook "slow\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded/,
    );
  });

  it('a webhook with sideEffects Unknown is refused (v1), and a dry run runs through one with None', async () => {
    // v1 takes only None and NoneOnDryRun: the webhooks kube refuses dry runs for cannot be made
    const unknown = configuration('MutatingWebhookConfiguration', 'unknown-effects', [
      hook({
        name: 'unknown-effects.example.com',
        url: `https://127.0.0.1:${hooks.port}/mutate`,
        caBundle: hooks.caBundle,
        sideEffects: 'Unknown',
        objectSelector: { matchLabels: { dry: 'yes' } },
      }),
    ]);
    const r = await k(['apply', '-f', '-'], unknown);
    assert.notEqual(r.code, 0);
    assert.ok(
      r.stderr.includes(
        'The MutatingWebhookConfiguration "unknown-effects" is invalid: webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"',
      ),
      r.stderr,
    );
    assert.match((await k(['get', 'mutatingwebhookconfiguration', 'unknown-effects'])).stderr, /NotFound|not found/);
    const before = hooks.seen.filter((s) => s.request.name === 'cm-dry2').length;
    const out = await kOk([
      'create',
      'configmap',
      'cm-dry2',
      '-n',
      'adm-on',
      '--dry-run=server',
      '-o',
      'jsonpath={.metadata.labels.mutated}',
    ]);
    assert.equal(out, 'yes');
    const calls = hooks.seen.filter((s) => s.request.name === 'cm-dry2');
    assert.ok(calls.length > before && calls.every((s) => s.request.dryRun === true && s.request.options.dryRun[0] === 'All'));
    assert.match((await k(['get', 'configmap', 'cm-dry2', '-n', 'adm-on'])).stderr, /not found/);
  });

  it('custom resources go to the webhooks too', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    await kOk(['apply', '-f', '-'], JSON.stringify(crd));
    await kOk(['wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=60s']);
    const config = configuration('MutatingWebhookConfiguration', 'widgets', [
      {
        ...hook({ name: 'widgets.example.com', url: `https://127.0.0.1:${hooks.port}/mutate`, caBundle: hooks.caBundle }),
        rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['*'], resources: ['widgets'] }],
      },
    ]);
    await kOk(['apply', '-f', '-'], config);
    const widget = (name: string) =>
      JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'adm-off' }, spec: { size: 1 } });
    await waitFor(
      'the widget webhook in effect',
      async () => {
        const r = await k(['create', '-f', '-', '--dry-run=server', '-o', 'jsonpath={.metadata.labels.mutated}'], widget('probe'));
        return r.code === 0 && r.stdout === 'yes';
      },
      60_000,
      300,
    );
    const r = await k(['create', '-f', '-'], widget('w1'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Warning: mutated w1/);
    assert.equal((await labelsOf('adm-off', 'widget', 'w1')).mutated, 'yes');
    const req = hooks.seen.filter((s) => s.request.name === 'w1').at(-1)!.request;
    assert.deepEqual(req.kind, { group: 'example.com', version: 'v1', kind: 'Widget' });
    assert.deepEqual(req.resource, { group: 'example.com', version: 'v1', resource: 'widgets' });
  });

  it('pods are mutated too', async () => {
    // the ServiceAccount admission needs the namespace's default service account first
    await waitFor(
      'default service account',
      async () => (await k(['get', 'serviceaccount', 'default', '-n', 'adm-on'])).code === 0,
      30_000,
      200,
    );
    const r = await k(['run', 'p1', '-n', 'adm-on', '--image=registry.k8s.io/pause:3.10']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Warning: mutated p1/);
    assert.equal((await labelsOf('adm-on', 'pod', 'p1')).mutated, 'yes');
  });
});

describe('admission plugin flags', { timeout: 300_000 }, () => {
  it('--disable-admission-plugins=MutatingAdmissionWebhook turns the mutation off, validation stays', async () => {
    const hooks = await startWebhookServer();
    const kapi = await startKapi({ extraArgs: ['--disable-admission-plugins=MutatingAdmissionWebhook'] });
    try {
      const opts = { kubeconfig: kapi.kubeconfig };
      const base = `https://127.0.0.1:${hooks.port}`;
      await kubectlOk(['apply', '-f', '-'], {
        ...opts,
        input: configuration('MutatingWebhookConfiguration', 'add-label', [
          hook({ name: 'label.example.com', url: `${base}/mutate`, caBundle: hooks.caBundle }),
        ]),
      });
      await kubectlOk(['apply', '-f', '-'], {
        ...opts,
        input: configuration('ValidatingWebhookConfiguration', 'deny', [
          hook({ name: 'deny.example.com', url: `${base}/validate`, caBundle: hooks.caBundle }),
        ]),
      });
      await waitFor(
        'the validating webhook in effect',
        async () => {
          const r = await kubectl(
            ['create', 'configmap', 'probe', '-n', 'default', '--from-literal=forbidden=1', '--dry-run=server'],
            opts,
          );
          return r.code !== 0 && r.stderr.includes('admission webhook "deny.example.com" denied the request');
        },
        30_000,
        200,
      );
      await kubectlOk(['create', 'configmap', 'plain', '-n', 'default', '--from-literal=a=1'], opts);
      const labels = await kubectlOk(['get', 'configmap', 'plain', '-n', 'default', '-o', 'jsonpath={.metadata.labels}'], opts);
      assert.equal(labels, '');
      assert.equal(hooks.seen.filter((s) => s.path === '/mutate').length, 0);
      assert.ok(hooks.seen.some((s) => s.path === '/validate' && s.request.name === 'plain'));
    } finally {
      await kapi.stop();
      await hooks.close();
    }
  });

  it('a configuration written through one replica applies on another; deleting it stops the calls', async () => {
    const hooks = await startWebhookServer();
    const etcd = await startEtcd();
    const started: KapiProcess[] = [];
    try {
      const a = await startKapi({ etcdServers: etcd.endpoint });
      started.push(a);
      const b = await startKapi({ etcdServers: etcd.endpoint });
      started.push(b);
      const config = configuration('ValidatingWebhookConfiguration', 'deny', [
        hook({ name: 'deny.example.com', url: `https://127.0.0.1:${hooks.port}/validate`, caBundle: hooks.caBundle }),
      ]);
      await kubectlOk(['apply', '-f', '-'], { kubeconfig: a.kubeconfig, input: config });
      const deniedOnB = async () => {
        const r = await kubectl(['create', 'configmap', 'probe', '-n', 'default', '--from-literal=forbidden=1', '--dry-run=server'], {
          kubeconfig: b.kubeconfig,
        });
        return r.code !== 0 && r.stderr.includes('admission webhook "deny.example.com" denied the request');
      };
      await waitFor('replica b applies the configuration written through a', deniedOnB, 30_000, 200);
      await kubectlOk(['delete', 'validatingwebhookconfiguration', 'deny'], { kubeconfig: a.kubeconfig });
      await waitFor('replica b drops the deleted configuration', async () => !(await deniedOnB()), 30_000, 200);
    } finally {
      for (const k of started) await k.stop();
      await etcd.stop();
      await hooks.close();
    }
  });

  it("unknown and overlapping plugin names stop start-up with kube's messages", async () => {
    await assert.rejects(
      startKapi({ extraArgs: ['--enable-admission-plugins=NoSuchPlugin'], readyTimeoutMs: 60_000 }),
      (err: Error) =>
        /kapi exited \(1\)/.test(err.message) && /enable-admission-plugins plugin \\?"NoSuchPlugin\\?" is unknown/.test(err.message),
    );
    await assert.rejects(
      startKapi({ extraArgs: ['--enable-admission-plugins=AlwaysDeny', '--disable-admission-plugins=AlwaysDeny'], readyTimeoutMs: 60_000 }),
      (err: Error) =>
        /kapi exited \(1\)/.test(err.message) &&
        /\[AlwaysDeny\] in enable-admission-plugins and disable-admission-plugins overlapped/.test(err.message),
    );
  });
});
