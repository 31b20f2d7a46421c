// The kubelet subresources through the load balancer of a local cluster (3 etcd + 3 kapi +
// haproxy, deploy/local-cluster.ts) with the kubelet stand-in behind a Node: kubectl 1.33
// and 1.27 logs -f, exec -i, exec -it, attach -i and port-forward, repeated so that every
// replica serves some; then a walk of discovery (/api/v1 and every group version /apis
// lists) asking every listed resource and subresource something it serves.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startLocalCluster, type LocalCluster } from '../deploy/local-cluster.js';
import { freePort, KubeHttpClient, kubectl, kubectlInTerminal, kubectlSpawn, terminalAvailable, type KubectlVersion } from './harness.js';
import { createRunningPod, registerNode, startKubeletStandin, type KubeletStandin } from './kubelet-standin.js';
import { discoveryRequests } from './discovery-walk.js';

const NS = 'kubelet-cluster';

async function echoThroughForward(localPort: number, text: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const s = net.connect(localPort, '127.0.0.1', () => s.write(text));
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
}

describe('kubelet subresources behind a local cluster', { timeout: 900_000 }, () => {
  let dir: string;
  let cluster: LocalCluster;
  let kubelet: KubeletStandin;
  let http: KubeHttpClient;
  let echo: net.Server;
  let echoPort: number;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-kubelet-cluster-'));
    kubelet = await startKubeletStandin();
    const file = (n: string, text: string): string => {
      const p = path.join(dir, n);
      writeFileSync(p, text);
      return p;
    };
    cluster = await startLocalCluster({
      dir: path.join(dir, 'cluster'),
      kapiArgs: [
        '--kubelet-certificate-authority',
        file('kubelet-ca.crt', kubelet.caPem),
        '--kubelet-client-certificate',
        file('kubelet-client.crt', kubelet.clientCertPem),
        '--kubelet-client-key',
        file('kubelet-client.key', kubelet.clientKeyPem),
        '--kubelet-preferred-address-types',
        'InternalIP',
      ],
    });
    http = KubeHttpClient.fromKubeconfig(cluster.kubeconfig);
    echoPort = await freePort();
    echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(echoPort, '127.0.0.1', r));
    assert.equal((await http.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
    await registerNode({ http }, 'node-1', '127.0.0.1', kubelet.port);
    await createRunningPod({ http }, NS, 'one', 'node-1', ['main']);
    kubelet.logs.set(`${NS}/one/main`, ['first line', 'second line']);
  });

  after(async () => {
    await cluster?.stop();
    await kubelet?.close();
    echo?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const version of ['1.33', '1.27'] as KubectlVersion[]) {
    const k = (args: string[], input?: string) => kubectl(['-n', NS, ...args], { kubeconfig: cluster.kubeconfig, version, input });

    it(`kubectl ${version} through the load balancer: logs -f, exec -i, exec -it, attach -i, port-forward (each three times)`, async () => {
      for (let round = 0; round < 3; round++) {
        const followed = await k(['logs', '-f', 'one']);
        assert.equal(followed.stdout, 'first line\nsecond line\nfollowed line 1\nfollowed line 2\n', followed.stderr);
        const cat = await k(['exec', '-i', 'one', '--', 'cat'], `round ${round}\n`);
        assert.equal(cat.code, 0, cat.stderr);
        assert.equal(cat.stdout, `round ${round}\n`);
        const failed = await k(['exec', 'one', '--', 'sh', '-c', 'exit 4']);
        assert.equal(failed.code, 4, failed.stderr);
        if (terminalAvailable) {
          const tty = await kubectlInTerminal(['-n', NS, 'exec', '-it', 'one', '--', 'stty', 'size'], {
            kubeconfig: cluster.kubeconfig,
            version,
            rows: 33,
            cols: 101,
          });
          assert.match(tty.stdout, /33 101\r?\n/, tty.stderr);
        }
        const attached = await k(['attach', '-i', 'one'], 'typed\n');
        assert.match(attached.stdout, /attached\ntyped\n/, attached.stderr);
        const local = await freePort();
        const pf = kubectlSpawn(['-n', NS, 'port-forward', 'pod/one', `${local}:${echoPort}`], { kubeconfig: cluster.kubeconfig, version });
        try {
          await pf.waitForOutput(/Forwarding from 127\.0\.0\.1/);
          assert.equal(await echoThroughForward(local, `forwarded ${round}`), `forwarded ${round}`);
        } finally {
          await pf.stop();
        }
      }
    });
  }

  it('every resource and subresource discovery lists answers something other than a 404 for the route', async () => {
    const requests = await discoveryRequests(http, { namespace: NS, pod: 'one', node: 'node-1' });
    assert.ok(requests.length > 90, `only ${requests.length} endpoints found`);
    for (const sub of [
      'pods/log',
      'pods/exec',
      'pods/attach',
      'pods/portforward',
      'pods/proxy',
      'nodes/proxy',
      'services/proxy',
      'pods/ephemeralcontainers',
      'pods/resize',
    ]) {
      assert.ok(
        requests.some((r) => r.endpoint === `v1 ${sub}`),
        `discovery lists ${sub}`,
      );
    }
    const unserved: string[] = [];
    for (const r of requests) {
      const res = await http.request(r.method, r.path, {
        body: r.body,
        headers: r.body !== undefined ? { 'content-type': r.contentType } : {},
      });
      if (res.status === 404 && !r.objectNotFound(res.body))
        unserved.push(`${r.endpoint}: ${r.method} ${r.path} -> 404 ${res.body.slice(0, 160)}`);
    }
    assert.deepEqual(unserved, []);
  });
});
