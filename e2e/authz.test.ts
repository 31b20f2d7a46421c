// Issue 5, authorization, with kubectl 1.33 against a real kapi started with
// --authorization-mode=Node,RBAC and a static token file: `kubectl auth can-i --list`, a user
// bound to `view` in one namespace, a bad token, anonymous access to the health and version
// endpoints only, `--as` only for callers allowed to impersonate, escalation prevention for
// roles and bindings, ClusterRole aggregation, the default ServiceAccount and kube-root-ca.crt
// controllers; then a kapi with --authorization-config whose webhook authorizer (an HTTPS
// server here) is called only when its match conditions hold and whose failure policy applies
// once it is down; mixing --authorization-config with --authorization-mode fails start-up.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import {
  freePort,
  kubectl,
  kubectlOk,
  loadKubeconfig,
  repoRoot,
  startKapi,
  uniqueName,
  waitFor,
  writeKubeconfig,
  type KapiProcess,
} from './harness.js';

/** a request without credentials (anonymous) */
function anonymousGet(kapi: KapiProcess, urlPath: string): Promise<{ status: number; body: string }> {
  const creds = loadKubeconfig(kapi.kubeconfig);
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(urlPath, creds.server), { ca: creds.ca, method: 'GET', agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const TOKENS = ['tok-alice,alice,alice-uid,"viewers"', 'tok-bob,bob,bob-uid', 'tok-carol,carol,carol-uid'].join('\n') + '\n';

describe('authorization: Node,RBAC with kubectl 1.33', () => {
  let dir: string;
  let kapi: KapiProcess;
  const ns1 = uniqueName('authz-a');
  const ns2 = uniqueName('authz-b');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });
  const as = (name: string) => ({ kubeconfig: path.join(dir, `${name}.kubeconfig`) });
  const apply = (doc: unknown) => kubectlOk(['apply', '-f', '-'], { ...admin(), input: JSON.stringify(doc) });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authz-'));
    writeFileSync(path.join(dir, 'tokens.csv'), TOKENS);
    kapi = await startKapi({
      extraArgs: [
        '--authorization-mode=Node,RBAC',
        '--token-auth-file',
        path.join(dir, 'tokens.csv'),
        '--feature-gates=AllowUnsafeMalformedObjectDeletion=true',
      ],
    });
    for (const u of ['alice', 'bob', 'carol']) writeKubeconfig(path.join(dir, `${u}.kubeconfig`), kapi.kubeconfig, { token: `tok-${u}` });
    writeKubeconfig(path.join(dir, 'bad.kubeconfig'), kapi.kubeconfig, { token: 'not-a-token' });
    await kubectlOk(['create', 'namespace', ns1], admin());
    await kubectlOk(['create', 'namespace', ns2], admin());
    await kubectlOk(['create', 'rolebinding', 'alice-view', '--clusterrole=view', '--user=alice', '-n', ns1], admin());
    // view gets its rules from the (leader-elected) aggregation controller shortly after start
    await waitFor(
      'alice may list pods',
      async () => (await kubectl(['auth', 'can-i', 'list', 'pods', '-n', ns1], as('alice'))).stdout.trim() === 'yes',
      30000,
      200,
    );
  });
  after(async () => {
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl auth can-i --list: the admin may do everything', async () => {
    const out = await kubectlOk(['auth', 'can-i', '--list'], admin());
    assert.match(out, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
    assert.match(out, /^\s+\[\*\]\s+\[\]\s+\[\*\]$/m);
  });

  it('kubectl auth can-i --list: a token user sees view in its namespace and the defaults elsewhere', async () => {
    const inNs = await kubectlOk(['auth', 'can-i', '--list', '-n', ns1], as('alice'));
    assert.match(inNs, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    assert.match(inNs, /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    assert.match(inNs, /\[\/version\]\s+\[\]\s+\[get\]/);
    const elsewhere = await kubectlOk(['auth', 'can-i', '--list', '-n', ns2], as('alice'));
    assert.doesNotMatch(elsewhere, /^pods\s/m);
    assert.equal((await kubectl(['auth', 'can-i', 'list', 'pods', '-n', ns1], as('alice'))).stdout.trim(), 'yes');
    assert.equal((await kubectl(['auth', 'can-i', 'create', 'pods', '-n', ns1], as('alice'))).stdout.trim(), 'no');
  });

  it('a user bound to view lists in its namespace, gets 403 elsewhere and on writes', async () => {
    await kubectlOk(['get', 'pods', '-n', ns1], as('alice'));
    const other = await kubectl(['get', 'pods', '-n', ns2], as('alice'));
    assert.notEqual(other.code, 0);
    assert.match(
      other.stderr,
      new RegExp(`pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "${ns2}"`),
    );
    const write = await kubectl(['create', 'configmap', 'x', '-n', ns1], as('alice'));
    assert.notEqual(write.code, 0);
    assert.match(
      write.stderr,
      new RegExp(`configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "${ns1}"`),
    );
    const secrets = await kubectl(['get', 'secrets', '-n', ns1], as('alice'));
    assert.match(secrets.stderr, /secrets is forbidden/);
  });

  it('a bad token is 401', async () => {
    const r = await kubectl(['get', 'pods', '-n', ns1], as('bad'));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Unauthorized/);
  });

  it('anonymous may read /livez, /readyz, /healthz and /version, and nothing else', async () => {
    for (const p of ['/livez', '/readyz', '/healthz', '/version']) {
      const r = await anonymousGet(kapi, p);
      assert.equal(r.status, 200, `${p}: ${r.body}`);
    }
    for (const p of ['/api', '/apis', '/api/v1/namespaces', `/api/v1/namespaces/${ns1}/pods`, '/openapi/v2']) {
      const r = await anonymousGet(kapi, p);
      assert.equal(r.status, 403, `${p}: ${r.body}`);
      assert.match(r.body, /User \\"system:anonymous\\" cannot/);
    }
  });

  it('--as works only for callers allowed to impersonate, resourceNames honoured', async () => {
    const denied = await kubectl(['get', 'pods', '-n', ns1, '--as', 'alice'], as('bob'));
    assert.notEqual(denied.code, 0);
    assert.match(
      denied.stderr,
      /users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
    const whoami = JSON.parse(await kubectlOk(['auth', 'whoami', '-o', 'json', '--as', 'alice', '--as-group', 'viewers'], admin())) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    assert.equal(whoami.status.userInfo.username, 'alice');
    assert.deepEqual(whoami.status.userInfo.groups, ['viewers', 'system:authenticated']);
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${ns1}-impersonate-alice` },
      rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['alice'] }],
    });
    await kubectlOk(
      ['create', 'clusterrolebinding', `${ns1}-carol-impersonates`, `--clusterrole=${ns1}-impersonate-alice`, '--user=carol'],
      admin(),
    );
    await waitFor(
      'carol may impersonate alice',
      async () => (await kubectl(['get', 'pods', '-n', ns1, '--as', 'alice'], as('carol'))).code === 0,
      15000,
      200,
    );
    const other = await kubectl(['get', 'pods', '-n', ns1, '--as', 'bob'], as('carol'));
    assert.match(other.stderr, /users "bob" is forbidden: User "carol" cannot impersonate resource "users"/);
    const group = await kubectl(['get', 'pods', '-n', ns1, '--as', 'alice', '--as-group', 'system:masters'], as('carol'));
    assert.match(group.stderr, /groups "system:masters" is forbidden: User "carol" cannot impersonate resource "groups"/);
  });

  it('creating a Role with more than the creator holds, or binding without bind, is refused', async () => {
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'role-manager', namespace: ns1 },
      rules: [
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'get', 'list'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      ],
    });
    await kubectlOk(['create', 'rolebinding', 'bob-role-manager', '--role=role-manager', '--user=bob', '-n', ns1], admin());
    await waitFor(
      'bob may create roles',
      async () => (await kubectl(['auth', 'can-i', 'create', 'roles', '-n', ns1], as('bob'))).stdout.trim() === 'yes',
      15000,
      200,
    );

    const escalating = await kubectl(['create', 'role', 'secret-reader', '--verb=get', '--resource=secrets', '-n', ns1], as('bob'));
    assert.notEqual(escalating.code, 0);
    assert.match(
      escalating.stderr,
      /roles\.rbac\.authorization\.k8s\.io "secret-reader" is forbidden: user "bob" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:/,
    );
    assert.match(escalating.stderr, /\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}/);
    await kubectlOk(['create', 'role', 'pod-reader', '--verb=get', '--resource=pods', '-n', ns1], as('bob'));

    const noBind = await kubectl(['create', 'rolebinding', 'bob-gives-edit', '--clusterrole=edit', '--user=carol', '-n', ns1], as('bob'));
    assert.notEqual(noBind.code, 0);
    assert.match(
      noBind.stderr,
      /rolebindings\.rbac\.authorization\.k8s\.io "bob-gives-edit" is forbidden: user "bob" .* is attempting to grant RBAC permissions not currently held/,
    );
    // a role whose rules bob holds may be bound without `bind`
    await kubectlOk(['create', 'rolebinding', 'bob-gives-pod-reader', '--role=pod-reader', '--user=carol', '-n', ns1], as('bob'));

    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'view-binder', namespace: ns1 },
      rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['view'] }],
    });
    await kubectlOk(['create', 'rolebinding', 'bob-view-binder', '--role=view-binder', '--user=bob', '-n', ns1], admin());
    await waitFor(
      'bob may bind view',
      async () =>
        (await kubectl(['create', 'rolebinding', 'bob-gives-view', '--clusterrole=view', '--user=carol', '-n', ns1], as('bob'))).code === 0,
      15000,
      200,
    );
    const edit = await kubectl(['create', 'rolebinding', 'bob-gives-edit-2', '--clusterrole=edit', '--user=carol', '-n', ns1], as('bob'));
    assert.notEqual(edit.code, 0);
    assert.match(edit.stderr, /is attempting to grant RBAC permissions not currently held/);
  });

  it('an unsafe delete (AllowUnsafeMalformedObjectDeletion) needs unsafe-delete-ignore-read-errors besides delete', async () => {
    await kubectlOk(['create', 'configmap', 'doomed', '-n', ns1], admin());
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'cm-deleter', namespace: ns1 },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'delete'] }],
    });
    await kubectlOk(['create', 'rolebinding', 'carol-cm-deleter', '--role=cm-deleter', '--user=carol', '-n', ns1], admin());
    await waitFor(
      'carol may delete configmaps',
      async () => (await kubectl(['auth', 'can-i', 'delete', 'configmaps', '-n', ns1], as('carol'))).stdout.trim() === 'yes',
      15000,
      200,
    );
    const url = `/api/v1/namespaces/${ns1}/configmaps/doomed?ignoreStoreReadErrorWithClusterBreakingPotential=true`;
    const refused = await kubectl(['delete', '--raw', url], as('carol'));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /configmaps "doomed" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors"/);
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'cm-deleter', namespace: ns1 },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'delete', 'unsafe-delete-ignore-read-errors'] }],
    });
    // allowed now, but the object reads fine: kube refuses the unsafe path for it
    await waitFor(
      'the verb is granted',
      async () => /is exclusively used to delete corrupt object/.test((await kubectl(['delete', '--raw', url], as('carol'))).stderr),
      15000,
      200,
    );
    assert.equal((await kubectl(['get', 'configmap', 'doomed', '-n', ns1], admin())).code, 0);
  });

  it('an aggregated ClusterRole picks up a newly labelled role within seconds', async () => {
    const label = `e2e.kapi.io/aggregate-${ns1}`;
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${ns1}-aggregate` },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] },
    });
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${ns1}-part`, labels: { [label]: 'true' } },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }],
    });
    const rules = await waitFor(
      'the aggregated rules',
      async () => {
        const cr = JSON.parse(await kubectlOk(['get', 'clusterrole', `${ns1}-aggregate`, '-o', 'json'], admin())) as { rules?: unknown[] };
        return cr.rules && cr.rules.length > 0 ? cr.rules : undefined;
      },
      10000,
      200,
    );
    assert.deepEqual(rules, [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }]);
    // view is aggregated too: the default role shows its rules
    const view = JSON.parse(await kubectlOk(['get', 'clusterrole', 'view', '-o', 'json'], admin())) as {
      rules?: { resources?: string[] }[];
      metadata: { labels: Record<string, string> };
    };
    assert.equal(view.metadata.labels['kubernetes.io/bootstrapping'], 'rbac-defaults');
    assert.ok(view.rules?.some((r) => r.resources?.includes('pods')));
  });

  it('every namespace gets the default ServiceAccount and kube-root-ca.crt', async () => {
    const ns = uniqueName('authz-c');
    await kubectlOk(['create', 'namespace', ns], admin());
    await waitFor(
      'default service account',
      async () => (await kubectl(['get', 'serviceaccount', 'default', '-n', ns], admin())).code === 0,
      15000,
      200,
    );
    const cm = await waitFor(
      'kube-root-ca.crt',
      async () => {
        const r = await kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', ns, '-o', 'json'], admin());
        return r.code === 0 ? (JSON.parse(r.stdout) as { data: Record<string, string> }) : undefined;
      },
      15000,
      200,
    );
    assert.deepEqual(Object.keys(cm.data), ['ca.crt']);
    assert.equal(cm.data['ca.crt']!.trim(), String(loadKubeconfig(kapi.kubeconfig).ca ?? '').trim());
  });
});

/** an HTTPS SubjectAccessReview webhook that allows everything and counts its calls */
async function startWebhook(dir: string): Promise<{ kubeconfig: string; calls: () => number; close(): Promise<void> }> {
  const caKey = await generateKey('ecdsa');
  const ca = await createCA('authz-webhook-ca', 1, caKey);
  const serverKey = await generateKey('ecdsa');
  const serverCert = await issueCert(ca, { commonName: '127.0.0.1', sans: ['127.0.0.1'], usage: 'server', validDays: 1 }, serverKey);
  const port = await freePort();
  let calls = 0;
  const server = https.createServer({ cert: serverCert, key: serverKey.privateKeyPem }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      calls++;
      const review = JSON.parse(body) as Record<string, unknown>;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ ...review, status: { allowed: true, reason: 'the e2e webhook allows it' } }));
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const kubeconfig = path.join(dir, 'webhook.kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'hook',
          cluster: {
            server: `https://127.0.0.1:${port}/authorize`,
            'certificate-authority-data': Buffer.from(ca.certPem).toString('base64'),
          },
        },
      ],
      users: [{ name: 'kapi', user: {} }],
      contexts: [{ name: 'hook', context: { cluster: 'hook', user: 'kapi' } }],
      'current-context': 'hook',
    }),
  );
  return {
    kubeconfig,
    calls: () => calls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('authorization: --authorization-config with a webhook', () => {
  let dir: string;
  let kapi: KapiProcess;
  let hook: Awaited<ReturnType<typeof startWebhook>>;
  const hooked = uniqueName('hooked');
  const plain = uniqueName('plain');
  const alice = () => ({ kubeconfig: path.join(dir, 'alice.kubeconfig') });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authz-hook-'));
    writeFileSync(path.join(dir, 'tokens.csv'), TOKENS);
    hook = await startWebhook(dir);
    writeFileSync(
      path.join(dir, 'authz.yaml'),
      JSON.stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AuthorizationConfiguration',
        authorizers: [
          { type: 'Node', name: 'node' },
          {
            type: 'Webhook',
            name: 'e2e-hook',
            webhook: {
              timeout: '3s',
              authorizedTTL: '1ms',
              unauthorizedTTL: '1ms',
              subjectAccessReviewVersion: 'v1',
              matchConditionSubjectAccessReviewVersion: 'v1',
              failurePolicy: 'Deny',
              connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: hook.kubeconfig },
              matchConditions: [{ expression: `has(request.resourceAttributes) && request.resourceAttributes.namespace == '${hooked}'` }],
            },
          },
          { type: 'RBAC', name: 'rbac' },
        ],
      }),
    );
    kapi = await startKapi({
      extraArgs: ['--authorization-config', path.join(dir, 'authz.yaml'), '--token-auth-file', path.join(dir, 'tokens.csv')],
    });
    writeKubeconfig(path.join(dir, 'alice.kubeconfig'), kapi.kubeconfig, { token: 'tok-alice' });
    await kubectlOk(['create', 'namespace', hooked], { kubeconfig: kapi.kubeconfig });
    await kubectlOk(['create', 'namespace', plain], { kubeconfig: kapi.kubeconfig });
  });
  after(async () => {
    await kapi?.stop();
    await hook?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the webhook is asked only when its match conditions hold', async () => {
    const before = hook.calls();
    await kubectlOk(['get', 'pods', '-n', hooked], alice());
    assert.ok(hook.calls() > before, 'the webhook was called for the matching namespace');
    const mid = hook.calls();
    const r = await kubectl(['get', 'pods', '-n', plain], alice());
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /pods is forbidden: User "alice" cannot list resource "pods"/);
    assert.equal(hook.calls(), mid, 'the webhook was not called for another namespace');
  });

  it('the failure policy (Deny) applies when the webhook is down', async () => {
    await hook.close();
    const r = await kubectl(['get', 'configmaps', '-n', hooked], alice());
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /configmaps is forbidden: User "alice" cannot list resource "configmaps"/);
  });
});

describe('authorization: start-up errors', () => {
  it('--authorization-config together with --authorization-mode ends start-up with an error', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-authz-mix-'));
    try {
      writeFileSync(
        path.join(dir, 'authz.yaml'),
        'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n',
      );
      const r = spawnSync(
        process.execPath,
        [
          path.join(repoRoot, 'bin', 'kapi'),
          '--data-dir',
          dir,
          '--secure-port',
          '1',
          '--bind-address',
          '127.0.0.1',
          '--authorization-config',
          path.join(dir, 'authz.yaml'),
          '--authorization-mode',
          'RBAC',
        ],
        {
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      assert.notEqual(r.status, 0);
      assert.match(
        r.stdout + r.stderr,
        /--authorization-config can not be specified when --authorization-mode or --authorization-webhook-\* flags are defined/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
