// The aggregation layer with kubectl 1.33: a front kapi proxies agg.example.com/v1 to a
// second kapi (aggregated-backend.ts) behind an APIService, over front-proxy client
// certificates. Local APIServices as kube lists them, discovery (`api-versions`,
// `api-resources`), OpenAPI (`explain`), get/list/watch/create/delete and Table output through
// the front, RBAC at the front (a denied user never reaches the backend; the backend sees
// the front's user), and availability while the backend is stopped and started again.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, kubectlSpawn, startKapi, waitFor, writeKubeconfig, type KapiProcess } from './harness.js';
import {
  API_SERVICE,
  GROUP,
  availability,
  backendArgs,
  frontProxyFlags,
  makeFrontProxyCerts,
  registration,
  startBackend,
  type Backend,
} from './aggregated-backend.js';

const widget = (name: string, color: string): string =>
  JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { color } });

describe('aggregated API servers', { timeout: 900_000 }, () => {
  let dir: string;
  let backend: Backend;
  let front: KapiProcess;
  let admin: { kubeconfig: string };
  /** kubectl options for a token user (a kubeconfig of its own beside the admin's) */
  const asUser = (name: string) => ({
    kubeconfig: writeKubeconfig(path.join(dir, `${name}.kubeconfig`), front.kubeconfig, { token: `${name}-token` }),
  });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-aggregator-'));
    const certs = await makeFrontProxyCerts(path.join(dir, 'front-proxy'));
    backend = await startBackend(backendArgs(certs, dir), path.join(dir, 'backend'));
    const tokens = path.join(dir, 'tokens.csv');
    writeFileSync(tokens, 'alice-token,alice,1001\nbob-token,bob,1002\ncarol-token,carol,1003\n');
    front = await startKapi({ extraArgs: [...frontProxyFlags(certs), '--authorization-mode', 'RBAC', '--token-auth-file', tokens] });
    admin = { kubeconfig: front.kubeconfig };
    await kubectlOk(['apply', '-f', '-'], { ...admin, input: registration(backend.port, backend.caPem) });
    await kubectlOk(
      ['create', 'clusterrole', 'widget-editor', '--verb=get,list,watch,create,delete', `--resource=widgets.${GROUP}`],
      admin,
    );
    await kubectlOk(['create', 'clusterrolebinding', 'front-widgets', '--clusterrole=widget-editor', '--user=alice', '--user=bob'], admin);
    await waitFor(
      'the APIService to be Available',
      async () => ((await availability(admin.kubeconfig)).startsWith('True Passed') ? true : undefined),
      60_000,
    );
  });

  after(async () => {
    await front?.stop();
    await backend?.kapi.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists local APIServices as kube does, and the aggregated one with its service', async () => {
    const out = await kubectlOk(['get', 'apiservices'], admin);
    assert.match(out, /^NAME\s+SERVICE\s+AVAILABLE\s+AGE$/m);
    assert.match(out, /^v1\.\s+Local\s+True\s+/m);
    assert.match(out, /^v1\.apps\s+Local\s+True\s+/m);
    assert.match(out, /^v1\.apiregistration\.k8s\.io\s+Local\s+True\s+/m);
    assert.match(out, /^v1\.agg\.example\.com\s+aggregated\/backend\s+True\s+/m);
    const apps = JSON.parse(await kubectlOk(['get', 'apiservice', 'v1.apps', '-o', 'json'], admin));
    assert.deepEqual(apps.spec, { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
    assert.equal(apps.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'onstart');
    const condition = apps.status.conditions.find((c: { type: string }) => c.type === 'Available');
    assert.equal(condition.message, 'Local APIServices are always available');
  });

  it('shows the aggregated group in discovery (legacy and aggregated)', async () => {
    const versions = await kubectlOk(['api-versions'], admin);
    assert.match(versions, /^agg\.example\.com\/v1$/m);
    const resources = await kubectlOk(['api-resources', '--api-group', GROUP], admin);
    assert.match(resources, /^widgets\s+wdg\s+agg\.example\.com\/v1\s+true\s+Widget$/m);
    const legacy = JSON.parse(await kubectlOk(['get', '--raw', '/apis'], admin));
    assert.ok(legacy.groups.some((g: { name: string }) => g.name === GROUP));
    const group = JSON.parse(await kubectlOk(['get', '--raw', `/apis/${GROUP}`], admin));
    assert.deepEqual(group.preferredVersion, { groupVersion: `${GROUP}/v1`, version: 'v1' });
    const list = JSON.parse(await kubectlOk(['get', '--raw', `/apis/${GROUP}/v1`], admin));
    assert.equal(list.resources[0].name, 'widgets');
  });

  it('explains the aggregated kind from the backend OpenAPI', async () => {
    const out = await kubectlOk(['explain', 'widgets.spec'], admin);
    assert.match(out, /GROUP:\s+agg\.example\.com/);
    assert.match(out, /color\s+<string>/);
    assert.match(out, /The color of the widget\./);
  });

  it('creates, gets, lists, watches and deletes through the front, with Table output', async () => {
    const watch = kubectlSpawn(['get', 'widgets', '-w', '--output-watch-events'], admin);
    try {
      await kubectlOk(['create', '-f', '-'], { ...admin, input: widget('w1', 'red') });
      await watch.waitForOutput(/ADDED\s+w1\s+red/);
      const table = await kubectlOk(['get', 'widgets'], admin);
      assert.match(table, /^NAME\s+COLOR$/m);
      assert.match(table, /^w1\s+red\s+/m);
      const obj = JSON.parse(await kubectlOk(['get', 'widget', 'w1', '-o', 'json'], admin));
      assert.equal(obj.spec.color, 'red');
      // it is stored by the backend, not the front
      const direct = await backend.kapi.http.get(`/apis/${GROUP}/v1/namespaces/default/widgets/w1`);
      assert.equal(direct.status, 200);
      await kubectlOk(['delete', 'widget', 'w1'], admin);
      await watch.waitForOutput(/DELETED\s+w1\s+red/);
    } finally {
      await watch.stop();
    }
    const empty = await kubectl(['get', 'widgets'], admin);
    assert.match(empty.stderr, /No resources found in default namespace/);
  });

  it('authorizes at the front, and the backend sees the front user', async () => {
    const denied = await kubectl(['get', 'widgets'], asUser('carol'));
    assert.notEqual(denied.code, 0);
    assert.match(
      denied.stderr,
      /widgets\.agg\.example\.com is forbidden: User "carol" cannot list resource "widgets" in API group "agg\.example\.com" in the namespace "default"/,
    );
    // alice is allowed at both ends
    await kubectlOk(['create', '-f', '-'], { ...asUser('alice'), input: widget('by-alice', 'blue') });
    assert.match(await kubectlOk(['get', 'widgets'], asUser('alice')), /by-alice\s+blue/);
    // bob passes the front; the backend's RBAC, which knows only alice, refuses him by name
    const bob = await kubectl(['get', 'widgets'], asUser('bob'));
    assert.notEqual(bob.code, 0);
    assert.match(bob.stderr, /User "bob" cannot list resource "widgets"/);
    // the backend's audit log is written after the response: wait for bob's line
    const audit = await waitFor(
      "bob in the backend's audit log",
      async () => {
        const text = readFileSync(backend.auditLog, 'utf8');
        return /"username":"bob"/.test(text) ? text : undefined;
      },
      30_000,
    );
    assert.match(audit, /"username":"alice"/);
    assert.doesNotMatch(audit, /"username":"carol"/);
    await kubectlOk(['delete', 'widget', 'by-alice'], admin);
  });

  it('marks the APIService unavailable while the backend is down, and 503s', async () => {
    const { args, dataDir, port } = backend;
    await backend.kapi.stop();
    await waitFor(
      'the APIService to be unavailable',
      async () => {
        const a = await availability(admin.kubeconfig);
        return a.startsWith('False FailedDiscoveryCheck') ? a : undefined;
      },
      120_000,
    ).then((a) =>
      assert.match(
        a,
        new RegExp(`failing or missing response from https://127\\.0\\.0\\.1:${port}/apis/${GROUP}/v1: .*connection refused`),
      ),
    );
    const down = await kubectl(['get', 'widgets'], admin);
    assert.notEqual(down.code, 0);
    assert.match(down.stderr, /the server is currently unable to handle the request/);
    const raw = await front.http.get(`/apis/${GROUP}/v1/namespaces/default/widgets`);
    assert.equal(raw.status, 503);
    assert.equal(raw.body, 'service unavailable\n');
    // the rest of the front is not disturbed
    await kubectlOk(['get', 'ns', 'default'], admin);
    backend = await startBackend(args, dataDir, port);
    await waitFor(
      'the APIService to be available again',
      async () => ((await availability(admin.kubeconfig)).startsWith('True Passed') ? true : undefined),
      120_000,
    );
    await kubectlOk(['get', 'widgets'], admin);
  });

  it('reports a missing Service and missing endpoints with kube reasons', async () => {
    await kubectlOk(['-n', 'aggregated', 'delete', 'endpointslice', 'backend-1'], admin);
    await waitFor(
      'EndpointsNotFound',
      async () =>
        (await availability(admin.kubeconfig)) === 'False EndpointsNotFound cannot find endpointslices for service/backend in "aggregated"'
          ? true
          : undefined,
      60_000,
    );
    await kubectlOk(['-n', 'aggregated', 'delete', 'service', 'backend'], admin);
    await waitFor(
      'ServiceNotFound',
      async () =>
        (await availability(admin.kubeconfig)) === 'False ServiceNotFound service/backend in "aggregated" is not present'
          ? true
          : undefined,
      60_000,
    );
    await kubectlOk(['apply', '-f', '-'], { ...admin, input: registration(backend.port, backend.caPem) });
    await waitFor(
      'the APIService to be available again',
      async () => ((await availability(admin.kubeconfig)).startsWith('True Passed') ? true : undefined),
      60_000,
    );
    void API_SERVICE;
  });
});
