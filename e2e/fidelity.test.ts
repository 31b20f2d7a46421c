// Differences a client could see, each checked with the client that saw it: Table rows with
// whole objects (kubectl --sort-by), health checks named with a slash, ...

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, startKapi, uniqueName, waitFor, type KapiProcess, type KubectlVersion } from './harness.js';

let kapi: KapiProcess;

before(async () => {
  kapi = await startKapi();
});

after(async () => {
  await kapi?.stop();
});

function pod(name: string, namespace: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
  });
}

for (const version of ['1.33', '1.27'] as KubectlVersion[]) {
  test(`kubectl ${version} get pods --sort-by prints the pods' columns (Table rows carry kind and apiVersion)`, async () => {
    const opts = { kubeconfig: kapi.kubeconfig, version };
    const ns = uniqueName('sort');
    await kubectlOk(['create', 'namespace', ns], opts);
    for (const name of ['b-pod', 'a-pod', 'c-pod']) await kubectlOk(['create', '-f', '-'], { ...opts, input: pod(name, ns) });
    const r = await kubectl(['get', 'pods', '-n', ns, '--sort-by=.metadata.name'], opts);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(/\s+/)[0]),
      ['a-pod', 'b-pod', 'c-pod'],
    );
    for (const l of lines.slice(1)) assert.match(l, /\s0\/1\s+Pending\s+0\s+\d+s$/);
    assert.doesNotMatch(r.stdout, /<unknown>/);
  });
}

test("a Table with includeObject=Object: every row's object says its kind and apiVersion", async () => {
  const ns = uniqueName('rows');
  await kubectlOk(['create', 'namespace', ns], { kubeconfig: kapi.kubeconfig });
  await kubectlOk(['create', '-f', '-'], { kubeconfig: kapi.kubeconfig, input: pod('p', ns) });
  const res = await kapi.http.request('GET', `/api/v1/namespaces/${ns}/pods?includeObject=Object`, {
    accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
  });
  assert.equal(res.status, 200);
  const table = JSON.parse(res.body) as { rows: { object: Record<string, unknown> }[] };
  assert.equal(table.rows.length, 1);
  assert.equal(table.rows[0]!.object.kind, 'Pod');
  assert.equal(table.rows[0]!.object.apiVersion, 'v1');
  assert.deepEqual(Object.keys(table.rows[0]!.object).slice(0, 3), ['kind', 'apiVersion', 'metadata']);
});

function deployment(name: string, namespace: string, strategy: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      strategy,
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
    },
  });
}

for (const version of ['1.33', '1.27'] as KubectlVersion[]) {
  test(`kubectl ${version} apply: a strategy changed to Recreate drops rollingUpdate (x-kubernetes-patch-strategy retainKeys on a $ref)`, async () => {
    const opts = { kubeconfig: kapi.kubeconfig, version };
    const ns = uniqueName('retain');
    await kubectlOk(['create', 'namespace', ns], opts);
    await kubectlOk(['apply', '-f', '-'], {
      ...opts,
      input: deployment('d', ns, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: 0 } }),
    });
    const r = await kubectl(['apply', '-f', '-'], { ...opts, input: deployment('d', ns, { type: 'Recreate' }) });
    assert.equal(r.code, 0, r.stderr);
    const strategy = JSON.parse(await kubectlOk(['get', 'deployment', 'd', '-n', ns, '-o', 'jsonpath={.spec.strategy}'], opts)) as unknown;
    assert.deepEqual(strategy, { type: 'Recreate' });
  });
}

test('health checks whose names hold a slash answer at their own paths', async () => {
  const opts = { kubeconfig: kapi.kubeconfig };
  assert.equal(await kubectlOk(['get', '--raw', '/readyz/poststarthook/crd-informer-synced'], opts), 'ok');
  assert.equal(await kubectlOk(['get', '--raw', '/livez/poststarthook/bootstrap-controller'], opts), 'ok');
  assert.equal(await kubectlOk(['get', '--raw', '/readyz/poststarthook/rbac/bootstrap-roles'], opts), 'ok');
  assert.equal(await kubectlOk(['get', '--raw', '/readyz/ping'], opts), 'ok');
  const verbose = await kubectlOk(['get', '--raw', '/readyz?verbose'], opts);
  assert.match(verbose, /^\[\+\]poststarthook\/crd-informer-synced ok$/m);
  const missing = await kapi.http.get('/readyz/poststarthook/no-such-hook');
  assert.equal(missing.status, 404);
});

type Rule = { nonResourceURLs?: string[]; verbs: string[] };

function grants(rules: Rule[]): string[] {
  return rules.flatMap((r) => (r.nonResourceURLs ?? []).flatMap((u) => r.verbs.map((v) => `${v} ${u}`))).sort();
}

test('the default RBAC policy is created and reconciled under --authorization-mode=AlwaysAllow', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kapi-rbac-defaults-'));
  let own = await startKapi({ dataDir, extraArgs: ['--authorization-mode=AlwaysAllow'] });
  try {
    const opts = { kubeconfig: own.kubeconfig };
    const roles = await kubectlOk(['get', 'clusterroles', '-o', 'name'], opts);
    for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user']) {
      assert.match(roles, new RegExp(`^clusterrole.rbac.authorization.k8s.io/${name}$`, 'm'));
    }
    const bindings = await kubectlOk(['get', 'clusterrolebindings', '-o', 'name'], opts);
    assert.match(bindings, /^clusterrolebinding.rbac.authorization.k8s.io\/system:discovery$/m);
    assert.equal(await kubectlOk(['get', '--raw', '/readyz/poststarthook/rbac/bootstrap-roles'], opts), 'ok');

    // a default role whose rules were changed gets kube's rules back at the next start
    const before = JSON.parse(await kubectlOk(['get', 'clusterrole', 'system:discovery', '-o', 'json'], opts)) as { rules: Rule[] };
    await kubectlOk(
      ['patch', 'clusterrole', 'system:discovery', '--type=json', '-p', '[{"op":"replace","path":"/rules","value":[]}]'],
      opts,
    );
    await own.stop();
    own = await startKapi({ dataDir, extraArgs: ['--authorization-mode=AlwaysAllow'] });
    const after = JSON.parse(await kubectlOk(['get', 'clusterrole', 'system:discovery', '-o', 'json'], { kubeconfig: own.kubeconfig })) as {
      rules: Rule[];
    };
    // kube appends what is missing one verb and URL at a time
    assert.deepEqual(grants(after.rules), grants(before.rules));
  } finally {
    await own.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("flowcontrol v1 objects are stored with kube's defaults", async () => {
  const opts = { kubeconfig: kapi.kubeconfig };
  const level = uniqueName('level');
  const exempt = uniqueName('exempt');
  const schema = uniqueName('schema');
  await kubectlOk(['create', '-f', '-'], {
    ...opts,
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
          kind: 'PriorityLevelConfiguration',
          metadata: { name: level },
          spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } },
        },
        {
          apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
          kind: 'PriorityLevelConfiguration',
          metadata: { name: exempt },
          spec: { type: 'Exempt', exempt: {} },
        },
        {
          apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
          kind: 'FlowSchema',
          metadata: { name: schema },
          spec: {
            priorityLevelConfiguration: { name: level },
            rules: [
              {
                subjects: [{ kind: 'Group', group: { name: 'nobody' } }],
                nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/nothing'] }],
              },
            ],
          },
        },
      ],
    }),
  });
  const get = async (kind: string, name: string) =>
    (JSON.parse(await kubectlOk(['get', kind, name, '-o', 'json'], opts)) as { spec: Record<string, unknown> }).spec;
  assert.deepEqual((await get('prioritylevelconfigurations', level)).limited, {
    nominalConcurrencyShares: 30,
    lendablePercent: 0,
    limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } },
  });
  assert.deepEqual((await get('prioritylevelconfigurations', exempt)).exempt, { nominalConcurrencyShares: 0, lendablePercent: 0 });
  assert.equal((await get('flowschemas', schema)).matchingPrecedence, 1000);
  // an explicit 0 of a v1 pointer stays 0
  await kubectlOk(
    ['patch', 'prioritylevelconfigurations', level, '--type=merge', '-p', '{"spec":{"limited":{"nominalConcurrencyShares":0}}}'],
    opts,
  );
  assert.equal(
    ((await get('prioritylevelconfigurations', level)).limited as { nominalConcurrencyShares: number }).nominalConcurrencyShares,
    0,
  );
});

test('eviction: a PodDisruptionBudget with an empty selector guards every pod of its namespace', async () => {
  const opts = { kubeconfig: kapi.kubeconfig };
  const ns = uniqueName('evict');
  await kubectlOk(['create', 'namespace', ns], opts);
  // running and ready (a pending pod may always go): no kubelet here, the status says so
  const running = JSON.stringify({ status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });
  for (const name of ['p1', 'p2']) {
    await kubectlOk(['create', '-f', '-'], { ...opts, input: pod(name, ns) });
    await kubectlOk(['patch', 'pod', name, '-n', ns, '--subresource=status', '--type=merge', '-p', running], opts);
  }
  await kubectlOk(['create', '-f', '-'], {
    ...opts,
    input: JSON.stringify({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'all', namespace: ns },
      spec: { selector: {}, maxUnavailable: 0 },
    }),
  });
  // no disruption controller runs here: the status says what it would
  await kubectlOk(
    [
      'patch',
      'pdb',
      'all',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 } }),
    ],
    opts,
  );
  const evict = (name: string) =>
    kapi.http.post(`/api/v1/namespaces/${ns}/pods/${name}/eviction`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: ns },
    });
  const refused = await evict('p1');
  assert.equal(refused.status, 429, refused.body);
  assert.match(refused.body, /Cannot evict pod as it would violate the pod's disruption budget/);

  await kubectlOk(
    ['patch', 'pdb', 'all', '-n', ns, '--subresource=status', '--type=merge', '-p', '{"status":{"disruptionsAllowed":1}}'],
    opts,
  );
  const allowed = await evict('p2');
  assert.equal(allowed.status, 201, allowed.body);
  const left = JSON.parse(await kubectlOk(['get', 'pdb', 'all', '-n', ns, '-o', 'json'], opts)) as {
    status: { disruptionsAllowed: number; disruptedPods?: Record<string, string> };
  };
  assert.equal(left.status.disruptionsAllowed, 0);
  assert.ok(left.status.disruptedPods?.p2);
});

test('automatic reloads of --authentication-config and --authorization-config are counted as kube counts them', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-config-reload-'));
  const authn = path.join(dir, 'authn.yaml');
  const authz = path.join(dir, 'authz.yaml');
  const authnText = 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt: []\n';
  const authzText = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n';
  writeFileSync(authn, authnText);
  writeFileSync(authz, authzText);
  const own = await startKapi({ extraArgs: ['--authentication-config', authn, '--authorization-config', authz] });
  try {
    const opts = { kubeconfig: own.kubeconfig };
    const series = async (name: string) =>
      (await kubectlOk(['get', '--raw', '/metrics'], opts)).split('\n').filter((l) => l.startsWith(`${name}{`));
    const reloads = 'apiserver_authentication_config_controller_automatic_reloads_total';
    const authzReloads = 'apiserver_authorization_config_controller_automatic_reloads_total';
    // a valid change, then one that is refused (anonymous may not change)
    writeFileSync(authn, authnText + '# changed\n');
    writeFileSync(authz, authzText + '# changed\n');
    await waitFor(
      'a successful authentication reload',
      async () => (await series(reloads)).some((l) => l.includes('status="success"')),
      30_000,
    );
    await waitFor(
      'a successful authorization reload',
      async () => (await series(authzReloads)).some((l) => l.includes('status="success"')),
      90_000,
    );
    writeFileSync(authn, authnText + 'anonymous:\n  enabled: true\n');
    await waitFor(
      'a failed authentication reload',
      async () => (await series(reloads)).some((l) => l.includes('status="failure"')),
      30_000,
    );

    const lines = await series(reloads);
    const hash = /apiserver_id_hash="(sha256:[0-9a-f]{64})"/.exec(lines[0]!)?.[1];
    assert.ok(hash, lines.join('\n'));
    assert.ok(lines.includes(`${reloads}{status="success",apiserver_id_hash="${hash}"} 1`), lines.join('\n'));
    assert.ok(lines.includes(`${reloads}{status="failure",apiserver_id_hash="${hash}"} 1`), lines.join('\n'));
    const stamps = await series('apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds');
    assert.equal(stamps.length, 2);
    for (const l of stamps) assert.ok(Number(l.split(' ').pop()) > 1.7e9, l);
    assert.equal((await series('apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds')).length, 1);
  } finally {
    await own.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
