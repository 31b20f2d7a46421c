// The real kubectl 1.33 sends protobuf bodies for `kubectl create <kind>` (typed client-go
// clients ask for application/vnd.kubernetes.protobuf first). A throwaway node:http server on
// 127.0.0.1 records each body and answers with our protobuf encoding of the created object.
// Two judges:
//  - what we decode from kubectl's bytes must equal what kubectl prints for the same command
//    under --dry-run=client -o json (Go's JSON of the very object it would send);
//  - what kubectl prints from our protobuf answer (-o json) must equal the object we encoded.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeObject, encodeObject, PROTOBUF_MEDIA_TYPE, type JsonObject } from './codec.js';

function findKubectl133(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'kubectl');
    if (!existsSync(candidate)) continue;
    const versioned = join(dirname(realpathSync(candidate)), 'kubectl.1.33');
    if (existsSync(versioned)) return versioned;
    try {
      const viaLink = join(dirname(readlinkSync(candidate)), 'kubectl.1.33');
      if (existsSync(viaLink)) return viaLink;
    } catch {
      // not a symlink
    }
  }
  return undefined;
}

const kubectl = findKubectl133();

interface Received {
  method: string;
  path: string;
  contentType: string;
  accept: string;
  body: Buffer;
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectl as string, args, { timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Go prints zero times (and nil slices without omitempty) as null; our JSON omits them */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = withoutNulls(v);
  return out;
}

/** what a server adds on create */
function created(obj: JsonObject, namespace: string | undefined): JsonObject {
  const metadata = { ...(obj.metadata as JsonObject) };
  if (namespace !== undefined) metadata.namespace = namespace;
  metadata.uid = '6f1c1f7e-95b1-4a50-b4a3-1f0d5e0c1a11';
  metadata.resourceVersion = '42';
  metadata.creationTimestamp = '2025-01-02T03:04:05Z';
  return { ...obj, metadata };
}

describe('kubectl 1.33 protobuf bodies', { skip: kubectl ? false : 'kubectl.1.33 not installed' }, () => {
  let server: Server;
  let dir: string;
  let kubeconfig: string;
  const received: Received[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-protobuf-kubectl-'));
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'http://localhost').pathname;
        const entry: Received = {
          method: req.method ?? '',
          path,
          contentType: req.headers['content-type'] ?? '',
          accept: req.headers.accept ?? '',
          body: Buffer.concat(chunks),
        };
        received.push(entry);
        if (req.method === 'POST' && entry.contentType === PROTOBUF_MEDIA_TYPE) {
          const { apiVersion, kind, object } = decodeObject(entry.body);
          const ns = /\/namespaces\/([^/]+)\//.exec(path)?.[1];
          const slash = apiVersion.indexOf('/');
          const gvk = { group: slash < 0 ? '' : apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1), kind };
          res.writeHead(201, { 'Content-Type': PROTOBUF_MEDIA_TYPE }).end(encodeObject(created(object, ns), gvk));
          return;
        }
        const status = {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'not here',
          reason: 'NotFound',
          code: 404,
        };
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify(status));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: t, cluster: {server: "${url}"}}]`,
        'users: [{name: u, user: {}}]',
        'contexts: [{name: t, context: {cluster: t, user: u, namespace: default}}]',
        'current-context: t',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'blob.bin'), Buffer.from([0xff, 0x00, 0xfe, 0x10]));
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** runs `kubectl <args> -o json` for real and in client dry-run; returns the body kubectl
   *  sent, what kubectl printed from our answer, and its dry-run print */
  async function create(args: string[]) {
    const common = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args, '-o', 'json'];
    const dry = await run([...common, '--dry-run=client']);
    assert.equal(dry.code, 0, dry.stderr);
    const before = received.length;
    const real = await run(common);
    assert.equal(real.code, 0, real.stderr);
    const posts = received.slice(before).filter((r) => r.method === 'POST');
    assert.equal(
      posts.length,
      1,
      `one POST expected, saw ${received
        .slice(before)
        .map((r) => `${r.method} ${r.path}`)
        .join(', ')}`,
    );
    const [post] = posts;
    assert.equal(post.contentType, PROTOBUF_MEDIA_TYPE);
    assert.ok(post.accept.startsWith(PROTOBUF_MEDIA_TYPE), post.accept);
    return {
      post,
      decoded: decodeObject(post.body),
      printed: JSON.parse(real.stdout) as JsonObject,
      dryRun: withoutNulls(JSON.parse(dry.stdout)) as JsonObject,
    };
  }

  async function check(args: string[], namespace: string | undefined): Promise<JsonObject> {
    const { decoded, printed, dryRun } = await create(args);
    assert.deepEqual(decoded.object, dryRun);
    assert.deepEqual(withoutNulls(printed), created(decoded.object, namespace));
    return decoded.object;
  }

  it('kubectl create namespace', async () => {
    const { post, decoded } = await create(['create', 'namespace', 'x']);
    assert.equal(post.path, '/api/v1/namespaces');
    assert.deepEqual(decoded.object, { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'x' }, spec: {}, status: {} });
    await check(['create', 'namespace', 'y'], undefined);
  });

  it('kubectl create configmap (literal and binary file)', async () => {
    const { decoded } = await create(['create', 'configmap', 'c', '--from-literal=a=b']);
    assert.deepEqual(decoded.object, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' }, data: { a: 'b' } });
    const obj = await check(
      ['create', 'configmap', 'c2', '--from-literal=multi=l1\nl2', `--from-file=blob=${join(dir, 'blob.bin')}`],
      'default',
    );
    assert.deepEqual(obj.binaryData, { blob: Buffer.from([0xff, 0x00, 0xfe, 0x10]).toString('base64') });
  });

  it('kubectl create secret generic', async () => {
    const obj = await check(['create', 'secret', 'generic', 's', '--from-literal=password=hunter2', '--type=Opaque'], 'default');
    assert.deepEqual(obj.data, { password: Buffer.from('hunter2').toString('base64') });
  });

  it('kubectl create deployment with zero replicas', async () => {
    const obj = await check(['create', 'deployment', 'd', '--image=nginx:1.27', '--replicas=0', '--port=8080', '-n', 'apps'], 'apps');
    assert.equal((obj.spec as JsonObject).replicas, 0);
  });

  it('kubectl create service, quota and poddisruptionbudget (int-or-string, quantities)', async () => {
    const svc = await check(['create', 'service', 'clusterip', 'web', '--tcp=80:8080', '--tcp=443:https'], 'default');
    assert.deepEqual(
      ((svc.spec as JsonObject).ports as JsonObject[]).map((p) => p.targetPort),
      [8080, 'https'],
    );
    const quota = await check(['create', 'quota', 'q', '--hard=cpu=1500m,memory=1Gi,pods=10'], 'default');
    assert.deepEqual((quota.spec as JsonObject).hard, { cpu: '1500m', memory: '1Gi', pods: '10' });
    const pdb = await check(['create', 'poddisruptionbudget', 'pdb', '--selector=app=web', '--min-available=50%'], 'default');
    assert.equal((pdb.spec as JsonObject).minAvailable, '50%');
  });
});
