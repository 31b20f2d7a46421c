// The kubelet-backed subresources with real kubectl 1.33 and 1.27 against one kapi, whose
// kubelet is the loopback stand-in (kubelet-standin.ts): logs, exec, attach, port-forward,
// the proxies and kube's errors.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, kubectl, kubectlInTerminal, kubectlSpawn, startKapi, terminalAvailable, type KapiProcess, type KubectlVersion } from './harness.js';
import { startKubeletStandin, type KubeletStandin } from './kubelet-standin.js';

const NS = 'kubelet-e2e';

/** a non-loopback address of this machine: kube refuses to proxy to loopback pods */
function hostAddress(): string | undefined {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

export async function registerNode(kapi: KapiProcess, name: string, address: string, port: number): Promise<void> {
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } };
  const created = await kapi.http.post('/api/v1/nodes', node);
  assert.equal(created.status, 201, created.body);
  const status = { status: { addresses: [{ type: 'InternalIP', address }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } };
  const patched = await kapi.http.patch(`/api/v1/nodes/${name}/status`, status);
  assert.equal(patched.status, 200, patched.body);
}

export async function createRunningPod(kapi: KapiProcess, ns: string, name: string, node: string | undefined, containers: string[], podIP?: string, containerPort?: number): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      ...(node ? { nodeName: node } : {}),
      containers: containers.map((c) => ({ name: c, image: 'busybox', ...(containerPort ? { ports: [{ containerPort }] } : {}) })),
    },
  };
  const created = await kapi.http.post(`/api/v1/namespaces/${ns}/pods`, pod);
  assert.equal(created.status, 201, created.body);
  if (!node) return;
  const status = {
    status: {
      phase: 'Running',
      ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
      containerStatuses: containers.map((c) => ({ name: c, ready: true, restartCount: 0, image: 'busybox', imageID: '', state: { running: { startedAt: '2025-01-01T00:00:00Z' } } })),
    },
  };
  const patched = await kapi.http.patch(`/api/v1/namespaces/${ns}/pods/${name}/status`, status);
  assert.equal(patched.status, 200, patched.body);
}

describe('kubelet subresources', () => {
  let kubelet: KubeletStandin;
  let kapi: KapiProcess;
  let echo: net.Server;
  let echoPort: number;
  let web: http.Server;
  let webPort: number;
  const host = hostAddress();

  before(async () => {
    kubelet = await startKubeletStandin();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-kubelet-'));
    const file = (n: string, text: string): string => {
      const p = path.join(dir, n);
      writeFileSync(p, text);
      return p;
    };
    kapi = await startKapi({
      extraArgs: [
        '--kubelet-certificate-authority', file('kubelet-ca.crt', kubelet.caPem),
        '--kubelet-client-certificate', file('kubelet-client.crt', kubelet.clientCertPem),
        '--kubelet-client-key', file('kubelet-client.key', kubelet.clientKeyPem),
        '--kubelet-preferred-address-types', 'InternalIP,Hostname',
      ],
    });
    echoPort = await freePort();
    echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(echoPort, '127.0.0.1', r));
    webPort = await freePort();
    web = http.createServer((req, res) => res.end(`pod web ${req.method} ${req.url}\n`));
    await new Promise<void>((r) => web.listen(webPort, host ?? '127.0.0.1', r));
    assert.equal((await kapi.http.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
    await registerNode(kapi, 'node-1', '127.0.0.1', kubelet.port);
    await createRunningPod(kapi, NS, 'one', 'node-1', ['main'], host, webPort);
    await createRunningPod(kapi, NS, 'two', 'node-1', ['c1', 'c2']);
    await createRunningPod(kapi, NS, 'pending', undefined, ['main']);
    await createRunningPod(kapi, NS, 'lost', 'node-gone', ['main']);
    kubelet.logs.set(`${NS}/one/main`, ['first line', 'second line', 'third line']);
    kubelet.logs.set(`${NS}/two/c1`, ['c1 says hi']);
    kubelet.logs.set(`${NS}/two/c2`, ['c2 says hi']);
  });

  after(async () => {
    await kapi?.stop();
    await kubelet?.close();
    echo?.close();
    web?.close();
  });

  for (const version of ['1.33', '1.30', '1.27'] as KubectlVersion[]) {
    const k = (args: string[], input?: string) => kubectl(['-n', NS, ...args], { kubeconfig: kapi.kubeconfig, version, input });

    it(`kubectl ${version} logs: whole, --tail, --timestamps, -c, --since, -f`, async () => {
      assert.equal((await k(['logs', 'one'])).stdout, 'first line\nsecond line\nthird line\n');
      assert.equal((await k(['logs', 'one', '--tail=1'])).stdout, 'third line\n');
      assert.match((await k(['logs', 'one', '--timestamps', '--tail=1'])).stdout, /^2025-01-01T00:00:02(\.0+)?Z third line\n$/);
      assert.equal((await k(['logs', 'two', '-c', 'c2'])).stdout, 'c2 says hi\n');
      assert.equal((await k(['logs', 'one', '--since=1h', '--tail=1'])).stdout, 'third line\n');
      const followed = await k(['logs', '-f', 'one']);
      assert.equal(followed.code, 0, followed.stderr);
      assert.equal(followed.stdout, 'first line\nsecond line\nthird line\nfollowed line 1\nfollowed line 2\n');
      assert.ok(kubelet.seen.some((p) => p === `/containerLogs/${NS}/one/main?sinceSeconds=3600&tailLines=1`), kubelet.seen.join('\n'));
    });

    it(`kubectl ${version} exec -i with stdin, output and an exit code`, async () => {
      const cat = await k(['exec', '-i', 'one', '--', 'cat'], 'hello through kapi\n');
      assert.equal(cat.code, 0, cat.stderr);
      assert.equal(cat.stdout, 'hello through kapi\n');
      const echoed = await k(['exec', 'one', '--', 'echo', 'a', 'b']);
      assert.equal(echoed.stdout, 'a b\n');
      const failed = await k(['exec', 'one', '--', 'sh', '-c', 'exit 3']);
      assert.equal(failed.code, 3, failed.stderr);
      assert.match(failed.stderr, /command terminated with exit code 3/);
    });

    it(`kubectl ${version} exec -it: a terminal and its size on the resize channel`, { skip: terminalAvailable ? false : 'no script(1)' }, async () => {
      const r = await kubectlInTerminal(['-n', NS, 'exec', '-it', 'one', '--', 'stty', 'size'], { kubeconfig: kapi.kubeconfig, version, rows: 27, cols: 91 });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /27 91\r?\n/);
    });

    it(`kubectl ${version} attach -i`, async () => {
      const attached = await k(['attach', '-i', 'one'], 'typed\n');
      assert.equal(attached.code, 0, attached.stderr);
      assert.match(attached.stdout, /attached\ntyped\n/);
    });

    it(`kubectl ${version} port-forward carries bytes both ways`, async () => {
      const local = await freePort();
      const pf = kubectlSpawn(['-n', NS, 'port-forward', 'pod/one', `${local}:${echoPort}`], { kubeconfig: kapi.kubeconfig, version });
      try {
        await pf.waitForOutput(/Forwarding from 127\.0\.0\.1/);
        for (const text of ['ping one', 'ping two']) {
          const got = await new Promise<string>((resolve, reject) => {
            const s = net.connect(local, '127.0.0.1', () => s.write(text));
            let buf = '';
            s.on('data', (d) => {
              buf += d.toString();
              if (buf.length >= text.length) {
                s.end();
                resolve(buf);
              }
            });
            s.on('error', reject);
          });
          assert.equal(got, text);
        }
      } finally {
        await pf.stop();
      }
    });
  }

  it('errors as kube answers them', async () => {
    const raw = (p: string) => kubectl(['get', '--raw', p], { kubeconfig: kapi.kubeconfig });
    const base = `/api/v1/namespaces/${NS}/pods`;
    let r = await raw(`${base}/two/log`);
    assert.match(r.stderr, /a container name must be specified for pod two, choose one of: \[c1 c2\]/);
    r = await raw(`${base}/one/log?container=nope`);
    assert.match(r.stderr, /container nope is not valid for pod one/);
    r = await raw(`${base}/missing/log`);
    assert.match(r.stderr, /pods "missing" not found/);
    r = await raw(`${base}/one/log?tailLines=-1`);
    assert.match(r.stderr, /PodLogOptions "one" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0/);
    r = await raw(`${base}/one/log?sinceSeconds=1&sinceTime=2025-01-01T00:00:00Z`);
    assert.match(r.stderr, /at most one of `sinceTime` or `sinceSeconds` may be specified/);
    r = await raw(`${base}/lost/log`);
    assert.match(r.stderr, /nodes "node-gone" not found/);
    const pending = await kapi.http.get(`${base}/pending/log`);
    assert.equal(pending.status, 204);
    const exec = await kubectl(['-n', NS, 'exec', 'pending', '--', 'echo'], { kubeconfig: kapi.kubeconfig });
    assert.match(exec.stderr, /pod pending does not have a host assigned/);
    const noUpgrade = await kapi.http.post(`${base}/one/exec?command=echo&stdout=1`, '');
    assert.equal(noUpgrade.status, 400);
    assert.match(noUpgrade.body, /Upgrade request required/);
    r = await raw('/api/v1/nodes/node-1/proxy/healthz');
    assert.match(r.stderr, /address not allowed/);
  });

  it('pods/proxy and services/proxy (kubectl proxy)', { skip: host === undefined ? 'no non-loopback address' : false }, async () => {
    const r = await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/one/proxy/hello/?x=1`], { kubeconfig: kapi.kubeconfig });
    assert.equal(r.stdout, 'pod web GET /hello/?x=1\n', r.stderr);
    const withPort = await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/http:one:${webPort}/proxy/p`], { kubeconfig: kapi.kubeconfig });
    assert.equal(withPort.stdout, 'pod web GET /p\n', withPort.stderr);
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: NS }, spec: { ports: [{ name: 'http', port: 80, targetPort: webPort }], selector: { app: 'one' } } };
    assert.equal((await kapi.http.post(`/api/v1/namespaces/${NS}/services`, svc)).status, 201);
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [host], conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'one', namespace: NS } }],
      ports: [{ name: 'http', port: webPort, protocol: 'TCP' }],
    };
    assert.equal((await kapi.http.post(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, slice)).status, 201);
    const proxyPort = await freePort();
    const proxy = kubectlSpawn(['proxy', `--port=${proxyPort}`], { kubeconfig: kapi.kubeconfig });
    try {
      await proxy.waitForOutput(/Starting to serve/);
      const body = await new Promise<string>((resolve, reject) => {
        http.get(`http://127.0.0.1:${proxyPort}/api/v1/namespaces/${NS}/services/web:http/proxy/svc?y=2`, (res) => {
          let b = '';
          res.on('data', (d) => (b += d));
          res.on('end', () => resolve(b));
        }).on('error', reject);
      });
      assert.equal(body, 'pod web GET /svc?y=2\n');
    } finally {
      await proxy.stop();
    }
    const none = await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/services/web:81/proxy/`], { kubeconfig: kapi.kubeconfig });
    assert.match(none.stderr, /no service port 81 found for service "web"/);
  });
});
