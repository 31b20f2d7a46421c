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
import {
  freePort,
  kubectl,
  kubectlInTerminal,
  kubectlSpawn,
  startKapi,
  terminalAvailable,
  type KapiProcess,
  type KubectlVersion,
} from './harness.js';
import { createRunningPod, registerNode, startKubeletStandin, type KubeletStandin } from './kubelet-standin.js';

const NS = 'kubelet-e2e';

/** kube refuses to proxy to anything but global unicast addresses; kapi, started with
 *  --allow-loopback-proxy-targets, also to loopback, so every listener here stays on 127.0.0.1
 *  and a link-local address shows the refusal */
const LINK_LOCAL = '169.254.0.10';

describe('kubelet subresources', () => {
  let kubelet: KubeletStandin;
  let kapi: KapiProcess;
  let echo: net.Server;
  let echoPort: number;
  let web: http.Server;
  let webPort: number;
  const host = '127.0.0.1';

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
        '--kubelet-certificate-authority',
        file('kubelet-ca.crt', kubelet.caPem),
        '--kubelet-client-certificate',
        file('kubelet-client.crt', kubelet.clientCertPem),
        '--kubelet-client-key',
        file('kubelet-client.key', kubelet.clientKeyPem),
        '--kubelet-preferred-address-types',
        'InternalIP,Hostname',
        '--allow-loopback-proxy-targets',
      ],
    });
    echoPort = await freePort();
    echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(echoPort, '127.0.0.1', r));
    webPort = await freePort();
    web = http.createServer((req, res) => res.end(`pod web ${req.method} ${req.url}\n`));
    await new Promise<void>((r) => web.listen(webPort, host, r));
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
      assert.ok(
        kubelet.seen.some((p) => p === `/containerLogs/${NS}/one/main?sinceSeconds=3600&tailLines=1`),
        kubelet.seen.join('\n'),
      );
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

    it(`kubectl ${version} exec -it: a terminal and its size on the resize channel`, {
      skip: terminalAvailable ? false : 'no script(1)',
    }, async () => {
      const r = await kubectlInTerminal(['-n', NS, 'exec', '-it', 'one', '--', 'stty', 'size'], {
        kubeconfig: kapi.kubeconfig,
        version,
        rows: 27,
        cols: 91,
      });
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

  it("pods/ephemeralcontainers (kubectl debug, patch) with kube's validation", async () => {
    const k = (args: string[]) => kubectl(['-n', NS, ...args], { kubeconfig: kapi.kubeconfig });
    await createRunningPod(kapi, NS, 'debugged', 'node-1', ['c1', 'c2']);
    const debug = await k(['debug', 'debugged', '--image=busybox', '--container=dbg', '--target=c1', '--', 'sleep', '1']);
    assert.equal(debug.code, 0, debug.stderr);
    const names = async (): Promise<string[]> =>
      (
        JSON.parse((await k(['get', 'pod', 'debugged', '-o', 'json'])).stdout) as { spec: { ephemeralContainers?: { name: string }[] } }
      ).spec.ephemeralContainers?.map((c) => c.name) ?? [];
    assert.deepEqual(await names(), ['dbg']);
    const duplicate = await k(['debug', 'debugged', '--image=busybox', '--container=c2']);
    assert.match(duplicate.stderr, /spec\.ephemeralContainers\[1\]\.name: Duplicate value: "c2"/);
    const patch = (ops: unknown[]) =>
      k(['patch', 'pod', 'debugged', '--subresource=ephemeralcontainers', '--type=json', '-p', JSON.stringify(ops)]);
    const ports = await patch([
      {
        op: 'add',
        path: '/spec/ephemeralContainers/-',
        value: { name: 'p', image: 'busybox', ports: [{ containerPort: 80 }], readinessProbe: { exec: { command: ['true'] } } },
      },
    ]);
    assert.match(ports.stderr, /spec\.ephemeralContainers\[1\]\.ports: Forbidden: cannot be set for an Ephemeral Container/);
    assert.match(ports.stderr, /spec\.ephemeralContainers\[1\]\.readinessProbe: Forbidden: cannot be set for an Ephemeral Container/);
    const removed = await patch([{ op: 'remove', path: '/spec/ephemeralContainers/0' }]);
    assert.match(removed.stderr, /spec\.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed/);
    const changed = await patch([{ op: 'replace', path: '/spec/ephemeralContainers/0/image', value: 'alpine' }]);
    assert.match(changed.stderr, /spec\.ephemeralContainers\[dbg\]: Forbidden: existing ephemeral containers "dbg" may not be changed/);
    // what is not an ephemeral container is dropped, not refused
    const other = await patch([
      { op: 'replace', path: '/spec/containers/0/image', value: 'alpine' },
      { op: 'add', path: '/metadata/labels/x', value: 'y' },
      { op: 'add', path: '/spec/ephemeralContainers/-', value: { name: 'dbg2', image: 'busybox' } },
    ]);
    assert.equal(other.code, 0, other.stderr);
    const pod = JSON.parse((await k(['get', 'pod', 'debugged', '-o', 'json'])).stdout) as {
      metadata: { labels: Record<string, string> };
      spec: { containers: { image: string }[] };
    };
    assert.equal(pod.spec.containers[0].image, 'busybox');
    assert.equal(pod.metadata.labels.x, undefined);
    assert.deepEqual(await names(), ['dbg', 'dbg2']);
    const log = await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/debugged/log`], { kubeconfig: kapi.kubeconfig });
    assert.match(
      log.stderr,
      /a container name must be specified for pod debugged, choose one of: \[c1 c2\] or one of the ephemeral containers: \[dbg dbg2\]/,
    );
  });

  it("pods/resize (kubectl patch --subresource=resize) with kube 1.33's validation", async () => {
    const k = (args: string[]) => kubectl(['-n', NS, ...args], { kubeconfig: kapi.kubeconfig });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sized', namespace: NS },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'busybox',
            resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
          },
        ],
      },
    };
    assert.equal((await kapi.http.post(`/api/v1/namespaces/${NS}/pods`, pod)).status, 201);
    const resize = (p: unknown) => k(['patch', 'pod', 'sized', '--subresource=resize', '-p', JSON.stringify(p)]);
    const container = (resources: unknown, extra: Record<string, unknown> = {}) => ({
      spec: { containers: [{ name: 'main', resources, ...extra }] },
    });
    const grown = await resize(container({ limits: { cpu: '300m' } }, { image: 'alpine' }));
    assert.equal(grown.code, 0, grown.stderr);
    const stored = JSON.parse((await k(['get', 'pod', 'sized', '-o', 'json'])).stdout) as {
      metadata: { generation: number };
      spec: { containers: { image: string; resources: { limits: Record<string, string> } }[] };
    };
    assert.equal(stored.spec.containers[0].resources.limits.cpu, '300m');
    assert.equal(stored.spec.containers[0].image, 'busybox', 'not a resource: dropped');
    assert.equal(stored.metadata.generation, 2);
    let r = await resize(container({ limits: { 'ephemeral-storage': '1Gi' } }));
    assert.match(r.stderr, /spec: Forbidden: only cpu and memory resources are mutable/);
    r = await resize(container({ requests: { cpu: '300m' } }));
    assert.match(r.stderr, /spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing/);
    // (a removed request comes back by defaulting from its limit; a removed limit does not)
    r = await resize(container({ limits: { cpu: null } }));
    assert.match(r.stderr, /spec\.containers\[0\]\.resources\.limits\[cpu\]: Forbidden: resource limits cannot be removed/);
    r = await k([
      'patch',
      'pod',
      'two',
      '--subresource=resize',
      '-p',
      JSON.stringify({ spec: { containers: [{ name: 'c1', resources: { limits: { cpu: '1' } } }] } }),
    ]);
    assert.match(r.stderr, /spec: Forbidden: Pod running on node without support for resize/);
  });

  it('errors as kube answers them', async () => {
    const raw = (p: string) => kubectl(['get', '--raw', p], { kubeconfig: kapi.kubeconfig });
    const base = `/api/v1/namespaces/${NS}/pods`;
    let r = await raw(`${base}/two/log`);
    assert.match(r.stderr, /a container name must be specified for pod two, choose one of: \[c1 c2\]\n/);
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
    await registerNode(kapi, 'node-link-local', LINK_LOCAL, kubelet.port);
    r = await raw('/api/v1/nodes/node-link-local/proxy/healthz');
    assert.match(r.stderr, /address not allowed/);
  });

  it("nodes/proxy to a kubelet at the Node's address (loopback, allowed by --allow-loopback-proxy-targets)", async () => {
    await registerNode(kapi, 'node-2', host, kubelet.port);
    const r = await kubectl(['get', '--raw', '/api/v1/nodes/node-2/proxy/healthz?verbose=1'], { kubeconfig: kapi.kubeconfig });
    assert.equal(r.stdout, 'kubelet GET /healthz?verbose=1\n', r.stderr);
    assert.ok(kubelet.seen.includes('/healthz?verbose=1'));
    const named = await kubectl(['get', '--raw', `/api/v1/nodes/https:node-2:${kubelet.port}/proxy/metrics`], {
      kubeconfig: kapi.kubeconfig,
    });
    assert.equal(named.stdout, 'kubelet GET /metrics\n', named.stderr);
  });

  it('pods/proxy and services/proxy (kubectl proxy)', async () => {
    const r = await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/one/proxy/hello/?x=1`], { kubeconfig: kapi.kubeconfig });
    assert.equal(r.stdout, 'pod web GET /hello/?x=1\n', r.stderr);
    const withPort = await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/http:one:${webPort}/proxy/p`], {
      kubeconfig: kapi.kubeconfig,
    });
    assert.equal(withPort.stdout, 'pod web GET /p\n', withPort.stderr);
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { ports: [{ name: 'http', port: 80, targetPort: webPort }], selector: { app: 'one' } },
    };
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
        http
          .get(`http://127.0.0.1:${proxyPort}/api/v1/namespaces/${NS}/services/web:http/proxy/svc?y=2`, (res) => {
            let b = '';
            res.on('data', (d) => (b += d));
            res.on('end', () => resolve(b));
          })
          .on('error', reject);
      });
      assert.equal(body, 'pod web GET /svc?y=2\n');
    } finally {
      await proxy.stop();
    }
    const none = await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/services/web:81/proxy/`], { kubeconfig: kapi.kubeconfig });
    assert.match(none.stderr, /no service port 81 found for service "web"/);
  });
});
