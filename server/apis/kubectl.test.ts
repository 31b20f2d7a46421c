// The real kubectl 1.33 judges the discovery and OpenAPI documents. A throwaway node:http server
// on 127.0.0.1 serves only what this folder builds (discovery, /openapi/v2, /openapi/v3, /version);
// kubectl api-resources, api-versions, explain and client-side validation must work against it.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { loadCatalog } from './catalog.js';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  discoveryNotModified,
  negotiateDiscovery,
  type DiscoveryResponse,
} from './discovery.js';
import { OpenAPIService, type OpenAPIResponse } from './openapi.js';
import { loadSchemas } from './schema.js';
import { API_RESOURCES_1_33, API_VERSIONS_1_33 } from './testdata-1.33.js';

function findKubectl133(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'kubectl');
    if (!existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    const versioned = join(dirname(real), 'kubectl.1.33');
    if (existsSync(versioned)) return versioned;
    try {
      const link = readlinkSync(candidate);
      const viaLink = join(dirname(link), 'kubectl.1.33');
      if (existsSync(viaLink)) return viaLink;
    } catch {
      // not a symlink
    }
  }
  return undefined;
}

const kubectl = findKubectl133();

interface Seen {
  path: string;
  accept: string;
}

/** `legacyOnly` plays a server without aggregated discovery, so that clients walk every group version. */
function startDocServer(opts: { legacyOnly?: boolean } = {}): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const catalog = loadCatalog();
  const openapi = new OpenAPIService(catalog, loadSchemas());
  const seen: Seen[] = [];

  const send = (res: ServerResponse, req: IncomingMessage, doc: DiscoveryResponse | undefined): void => {
    if (!doc) return notFound(res);
    const headers: Record<string, string> = { ...doc.headers, 'Content-Type': doc.contentType };
    if (doc.etag) headers.ETag = doc.etag;
    if (discoveryNotModified(doc, req.headers['if-none-match'])) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, headers).end(doc.body);
  };
  const sendOpenAPI = (res: ServerResponse, r: OpenAPIResponse): void => {
    res.writeHead(r.status, r.headers).end(r.body);
  };
  const notFound = (res: ServerResponse): void => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server could not find the requested resource',
      reason: 'NotFound',
      details: {},
      code: 404,
    };
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify(status));
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const accept = req.headers.accept ?? '';
    seen.push({ path, accept });
    const segments = path.split('/').filter(Boolean);
    if (path === '/version') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          major: '1',
          minor: '33',
          gitVersion: 'v1.33.0',
          gitCommit: '',
          gitTreeState: 'clean',
          buildDate: '',
          goVersion: '',
          compiler: 'gc',
          platform: 'linux/amd64',
        }),
      );
      return;
    }
    if (path === '/api' || path === '/apis') {
      const form = opts.legacyOnly ? 'legacy' : negotiateDiscovery(accept);
      const root = path === '/api' ? 'api' : 'apis';
      if (form !== 'legacy') return send(res, req, aggregatedDiscovery(catalog, root, form));
      return send(res, req, root === 'api' ? apiVersions(`127.0.0.1:${(server.address() as AddressInfo).port}`) : apiGroupList(catalog));
    }
    if (path === '/apis/apiextensions.k8s.io/v1/customresourcedefinitions') {
      // kubectl's validation asks whether a kind is a CRD; there are none here
      const list = {
        kind: 'CustomResourceDefinitionList',
        apiVersion: 'apiextensions.k8s.io/v1',
        metadata: { resourceVersion: '1' },
        items: [],
      };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(list));
      return;
    }
    if (segments[0] === 'api' && segments.length === 2) return send(res, req, apiResourceList(catalog, '', segments[1] ?? ''));
    if (segments[0] === 'apis' && segments.length === 2) return send(res, req, apiGroup(catalog, segments[1] ?? ''));
    if (segments[0] === 'apis' && segments.length === 3)
      return send(res, req, apiResourceList(catalog, segments[1] ?? '', segments[2] ?? ''));
    if (path === '/openapi/v2') return sendOpenAPI(res, openapi.serveV2({ accept, ifNoneMatch: req.headers['if-none-match'] }));
    if (path === '/openapi/v3') return sendOpenAPI(res, openapi.serveV3Index({ ifNoneMatch: req.headers['if-none-match'] }));
    if (path.startsWith('/openapi/v3/')) {
      const hash = url.searchParams.get('hash') ?? undefined;
      return sendOpenAPI(
        res,
        openapi.serveV3(path.slice('/openapi/v3/'.length), { accept, hash, ifNoneMatch: req.headers['if-none-match'] }),
      );
    }
    notFound(res);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }));
  });
}

function run(binary: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(binary, args, { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function kubeconfigFor(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: docs, cluster: {server: "${url}"}}]`,
    'users: [{name: nobody, user: {}}]',
    'contexts: [{name: docs, context: {cluster: docs, user: nobody, namespace: default}}]',
    'current-context: docs',
    '',
  ].join('\n');
}

/** `kubectl api-resources --no-headers` rows as "name shortnames apiversion namespaced kind" */
function tableRows(out: string): string[] {
  return out
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .map((cols) => (cols.length === 5 ? cols : [cols[0], '', ...cols.slice(1)]).join(' '));
}

function expectedRows(): string[] {
  return API_RESOURCES_1_33.map(([name, short, gv, namespaced, kind]) => [name, short, gv, String(namespaced), kind].join(' '));
}

describe('kubectl 1.33 against the discovery and OpenAPI documents', { skip: kubectl ? false : 'kubectl.1.33 not installed' }, () => {
  let server: Server;
  let seen: Seen[];
  let dir: string;
  let kubeconfig: string;
  const k = async (...args: string[]) => {
    const out = await run(kubectl as string, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args]);
    assert.equal(out.code, 0, `kubectl ${args.join(' ')}: ${out.stderr}`);
    return out.stdout;
  };

  before(async () => {
    const started = await startDocServer();
    server = started.server;
    seen = started.seen;
    dir = mkdtempSync(join(tmpdir(), 'kapi-apis-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigFor(started.url));
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('api-resources shows the 1.33 table, read from aggregated discovery alone', async () => {
    const out = await k('api-resources', '--no-headers');
    assert.deepEqual(tableRows(out), expectedRows());
    assert.ok(seen.some((s) => s.path === '/apis' && s.accept.includes('g=apidiscovery.k8s.io;v=v2')));
    assert.ok(!seen.some((s) => s.path === '/apis/apps/v1'), 'kubectl should not need per-group-version discovery');
  });

  it('api-versions shows the 1.33 list', async () => {
    const out = await k('api-versions');
    assert.deepEqual(out.trim().split('\n'), API_VERSIONS_1_33);
  });

  it('legacy discovery (no aggregated form) gives the same table', async () => {
    const legacy = await startDocServer({ legacyOnly: true });
    try {
      const config = join(dir, 'kubeconfig-legacy');
      writeFileSync(config, kubeconfigFor(legacy.url));
      const out = await run(kubectl as string, [
        '--kubeconfig',
        config,
        '--cache-dir',
        join(dir, 'cache-legacy'),
        'api-resources',
        '--no-headers',
      ]);
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(tableRows(out.stdout), expectedRows());
      // the resources came from /api/v1 and /apis/<group>/<version> this time
      assert.ok(legacy.seen.some((s) => s.path === '/apis/apps/v1'));
      assert.ok(legacy.seen.some((s) => s.path === '/api/v1'));
    } finally {
      await new Promise<void>((resolve) => legacy.server.close(() => resolve()));
    }
  });

  it('explain walks the v3 documents', async () => {
    const replicas = await k('explain', 'deployment.spec.replicas');
    assert.match(replicas, /^GROUP:\s+apps$/m);
    assert.match(replicas, /^KIND:\s+Deployment$/m);
    assert.match(replicas, /^VERSION:\s+v1$/m);
    assert.match(replicas, /^FIELD: replicas <integer>$/m);
    const containers = await k('explain', 'pods.spec.containers');
    assert.match(containers, /^FIELD: containers <\[\]Container>$/m);
    assert.match(containers, /^\s+name\s+<string> -required-$/m);
    const recursive = await k('explain', 'cronjobs', '--recursive');
    assert.match(recursive, /^\s+jobTemplate\s+<JobTemplateSpec> -required-$/m);
    const hpa = await k('explain', 'hpa.spec.metrics');
    assert.match(hpa, /^VERSION:\s+v2$/m);
    assert.ok(seen.some((s) => /^\/openapi\/v3\/apis\/apps\/v1$/.test(s.path)));
  });

  it('client-side validation finds server-side field validation in the v3 documents', async () => {
    const manifest = join(dir, 'deploy.yaml');
    writeFileSync(
      manifest,
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web}',
        'spec:',
        '  selector: {matchLabels: {app: web}}',
        '  template:',
        '    metadata: {labels: {app: web}}',
        '    spec: {containers: [{name: web, image: nginx}]}',
        '',
      ].join('\n'),
    );
    const out = await k('create', '--dry-run=client', '--validate=strict', '-f', manifest, '-o', 'name');
    assert.equal(out.trim(), 'deployment.apps/web');
    // the probe found fieldValidation in v3 and never fell back to the protobuf-only v2 path
    assert.ok(!seen.some((s) => s.path === '/openapi/v2'), 'kubectl fell back to /openapi/v2');
  });

  it('List manifests and kinds without PATCH are validated against the protobuf /openapi/v2', async () => {
    const list = join(dir, 'list.yaml');
    writeFileSync(
      list,
      [
        'apiVersion: v1',
        'kind: List',
        'items:',
        '- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {x: y}}',
        '- apiVersion: apps/v1',
        '  kind: Deployment',
        '  metadata: {name: d}',
        '  spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}',
        '',
      ].join('\n'),
    );
    assert.equal((await k('create', '--dry-run=client', '-f', list, '-o', 'name')).trim(), 'configmap/a\ndeployment.apps/d');
    assert.ok(seen.some((s) => s.path === '/openapi/v2' && s.accept.includes('protobuf')));

    const bad = join(dir, 'bad-list.yaml');
    writeFileSync(
      bad,
      [
        'apiVersion: v1',
        'kind: List',
        'items:',
        '- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, dataa: {x: y}}',
        '- apiVersion: apps/v1',
        '  kind: Deployment',
        '  metadata: {name: d}',
        '  spec: {replicas: three, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}',
        '',
      ].join('\n'),
    );
    const rejected = await run(kubectl as string, [
      '--kubeconfig',
      kubeconfig,
      '--cache-dir',
      join(dir, 'cache'),
      'create',
      '--dry-run=client',
      '-f',
      bad,
    ]);
    assert.notEqual(rejected.code, 0);
    assert.match(rejected.stderr, /unknown field "dataa" in io\.k8s\.api\.core\.v1\.ConfigMap/);
    assert.match(rejected.stderr, /invalid type for io\.k8s\.api\.apps\.v1\.DeploymentSpec\.replicas: got "string", expected "integer"/);

    const review = join(dir, 'review.yaml');
    writeFileSync(
      review,
      'apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nspec: {resourceAttributes: {verb: get, resource: pods}}\n',
    );
    assert.equal(
      (await k('create', '--dry-run=client', '-f', review, '-o', 'name')).trim(),
      'selfsubjectaccessreview.authorization.k8s.io/<unknown>',
    );
  });

  it('explain can still read the v2 document', async () => {
    const out = await k('explain', '--output=plaintext-openapiv2', 'deployment.spec.strategy');
    assert.match(out, /^RESOURCE: strategy <Object>$/m);
    assert.match(out, /^\s+rollingUpdate\s+<Object>$/m);
  });
});
