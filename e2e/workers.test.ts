// A replica with two worker processes (--workers 2) on a real etcd: killing a worker loses no
// watch event (the client resumes from its last resourceVersion, like a reflector) and the
// primary starts the worker again; reads on fresh connections, which land on other workers
// and on another replica, see every write; /metrics counts the requests of both workers; the
// audit log, written by the primary, has every worker's events as whole lines; SIGTERM to the
// primary stops every process it started.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createNamespace,
  descendants,
  jsonOf,
  KubeHttpClient,
  loadKubeconfig,
  startEtcd,
  startKapi,
  uniqueName,
  waitFor,
  type EtcdProcess,
  type KapiProcess,
  type WatchEvent,
  type WatchStream,
} from './harness.js';
import { processAlive as alive } from '../storage/testing/processes.js';

type Meta = { metadata: { name: string; resourceVersion: string } };

/** the worker processes below a primary: node running kapi's entry script */
function workerPids(primary: number): number[] {
  return descendants(primary).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('server/main.js');
    } catch {
      return false;
    }
  });
}

/** starts kapi with two workers and waits until the primary says both are ready */
async function startWithWorkers(etcd: EtcdProcess, extraArgs: string[] = []): Promise<KapiProcess> {
  const kapi = await startKapi({ etcdServers: etcd.endpoint, extraArgs: ['--workers', '2', '--replica-response-header', ...extraArgs] });
  await waitFor('both workers ready', () => /workers\] kapi is ready/.test(kapi.logs()), 60_000);
  return kapi;
}

/** one request on a connection of its own (so the primary hands it to the next worker) */
async function onFreshConnection<T>(kapi: KapiProcess, use: (http: KubeHttpClient) => Promise<T>): Promise<T> {
  const http = new KubeHttpClient({ ...loadKubeconfig(kapi.kubeconfig), server: kapi.url });
  try {
    return await use(http);
  } finally {
    http.close();
  }
}

/** a watch that reopens from the last resourceVersion it saw whenever its connection ends */
class ResumingWatch {
  readonly events: WatchEvent[] = [];
  reconnects = 0;
  private current?: WatchStream;
  private stopped = false;
  private readonly running: Promise<void>;

  constructor(
    private readonly kapi: KapiProcess,
    private readonly path: string,
    private resourceVersion: string,
  ) {
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const http = new KubeHttpClient({ ...loadKubeconfig(this.kapi.kubeconfig), server: this.kapi.url });
      const w = http.watch(`${this.path}?watch=1&allowWatchBookmarks=false&resourceVersion=${this.resourceVersion}`);
      this.current = w;
      w.onEvent((ev) => {
        this.events.push(ev);
        this.resourceVersion = ev.object.metadata?.resourceVersion ?? this.resourceVersion;
      });
      await w.ended;
      http.close();
      if (!this.stopped) this.reconnects++;
      // a refused connection (no worker accepting yet) retries shortly
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.close();
    await this.running;
  }
}

describe('--workers 2', () => {
  let etcd: EtcdProcess;
  let a: KapiProcess;
  let b: KapiProcess;
  const ns = uniqueName('workers');

  before(async () => {
    etcd = await startEtcd();
    a = await startWithWorkers(etcd);
    b = await startWithWorkers(etcd);
    await createNamespace(a.http, ns);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it('runs two workers, each with its own identity Lease', async () => {
    assert.equal(workerPids(a.pid).length, 2);
    const leases = jsonOf<{ items: { metadata: { name: string } }[] }>(
      await a.http.get(
        '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=apiserver.kubernetes.io/identity%3Dkube-apiserver',
      ),
    );
    // two replicas of two workers
    assert.equal(new Set(leases.items.map((l) => l.metadata.name)).size, 4);
  });

  it('a write is read back on fresh connections through every worker of both replicas', async () => {
    const servedBy = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const created = await onFreshConnection(i % 2 ? a : b, (http) =>
        http.post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `ryw-${i}` } }),
      );
      assert.equal(created.status, 201, created.body);
      const rv = Number(jsonOf<Meta>(created).metadata.resourceVersion);
      for (const replica of [a, b, a, b]) {
        const got = await onFreshConnection(replica, (http) => http.get(`/api/v1/namespaces/${ns}/configmaps/ryw-${i}`));
        assert.equal(got.status, 200, `ryw-${i} through ${got.headers['kapi-replica']}: ${got.body}`);
        servedBy.add(String(got.headers['kapi-replica']));
        const list = await onFreshConnection(replica, (http) => http.get(`/api/v1/namespaces/${ns}/configmaps`));
        const body = jsonOf<{ metadata: { resourceVersion: string }; items: Meta[] }>(list);
        assert.ok(Number(body.metadata.resourceVersion) >= rv, `list at ${body.metadata.resourceVersion} after write at ${rv}`);
        assert.ok(
          body.items.some((it) => it.metadata.name === `ryw-${i}`),
          `ryw-${i} listed by ${list.headers['kapi-replica']}`,
        );
        servedBy.add(String(list.headers['kapi-replica']));
      }
    }
    // the reads really were spread over the four workers
    assert.equal(servedBy.size, 4, [...servedBy].join(', '));
  });

  it('/metrics counts the requests every worker served, whichever worker answers', async () => {
    const listCount = async (): Promise<number> => {
      const text = await onFreshConnection(a, async (http) => (await http.get('/metrics')).body);
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('apiserver_request_total{verb="LIST"') && l.includes('resource="persistentvolumes"') && l.includes('code="200"'),
        );
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const before = await listCount();
    const servedBy = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const res = await onFreshConnection(a, (http) => http.get('/api/v1/persistentvolumes'));
      assert.equal(res.status, 200, res.body);
      servedBy.add(String(res.headers['kapi-replica']));
    }
    assert.equal(servedBy.size, 2, 'both workers served the lists');
    // each scrape lands on another worker; every one reports both workers' requests
    for (let i = 0; i < 4; i++) assert.equal(await listCount(), before + 10);
    const text = (await a.http.get('/metrics')).body;
    // one build, not one per worker
    assert.match(text, /^kubernetes_build_info\{.*\} 1$/m);
  });

  it('a watch resumed after its worker is killed sees every write once, in order; the primary restarts the worker', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const startRv = jsonOf<Meta>(await a.http.get(base)).metadata.resourceVersion;
    const watch = new ResumingWatch(a, base, startRv);
    const written: string[] = [];
    let writing = true;
    const writer = (async () => {
      const http = new KubeHttpClient({ ...loadKubeconfig(b.kubeconfig), server: b.url });
      try {
        for (let i = 0; writing; i++) {
          const name = `w-${i}`;
          // a write cut off with its connection may still have been stored: retry until known
          for (;;) {
            const res = await http.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }).catch(() => undefined);
            if (res && (res.status === 201 || res.status === 409)) break;
            await new Promise((r) => setTimeout(r, 50));
          }
          written.push(name);
        }
      } finally {
        http.close();
      }
    })();
    try {
      const original = workerPids(a.pid);
      assert.equal(original.length, 2);
      // kill each original worker in turn: one of them serves the watch
      for (const victim of original) {
        const seen = written.length;
        await waitFor('writes before the kill', () => written.length >= seen + 5);
        process.kill(victim, 'SIGKILL');
        await waitFor('the killed worker gone', () => !alive(victim));
        await waitFor(
          'the primary starting a new worker',
          () => {
            const now = workerPids(a.pid);
            return now.length === 2 && !now.includes(victim);
          },
          60_000,
        );
        // the new worker serves: fresh connections reach two live workers again
        await waitFor(
          'the replacement serving',
          async () => {
            const replicas = new Set<string>();
            for (let i = 0; i < 4; i++) {
              const res = await onFreshConnection(a, (http) => http.get('/readyz')).catch(() => undefined);
              if (res?.status === 200) replicas.add(String(res.headers['kapi-replica']));
            }
            return replicas.size === 2;
          },
          60_000,
        );
      }
      assert.ok(watch.reconnects >= 1, 'the watch lost its worker at least once');
      writing = false;
      await writer;
      const last = written[written.length - 1]!;
      await waitFor('the watch catching up', () => watch.events.some((e) => e.object.metadata?.name === last), 30_000);
      assert.deepEqual(
        watch.events.filter((e) => e.type === 'ERROR'),
        [],
        'no watch error (e.g. 410 Gone)',
      );
      const added = watch.events.filter((e) => e.object.metadata?.name?.startsWith('w-'));
      assert.deepEqual(
        added.map((e) => `${e.type} ${e.object.metadata?.name}`),
        written.map((n) => `ADDED ${n}`),
      );
      // resourceVersions strictly increase: nothing replayed, nothing out of order
      const rvs = watch.events.map((e) => Number(e.object.metadata?.resourceVersion));
      assert.ok(
        rvs.every((rv, i) => i === 0 || rv > rvs[i - 1]!),
        `resourceVersions in order: ${rvs.join(',')}`,
      );
    } finally {
      writing = false;
      await writer;
      await watch.stop();
    }
    // the restarted workers took over their slots' identity Leases: still four
    const leases = jsonOf<{ items: unknown[] }>(
      await a.http.get(
        '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=apiserver.kubernetes.io/identity%3Dkube-apiserver',
      ),
    );
    assert.equal(leases.items.length, 4);
  });
});

describe('--workers 2: audit log, shutdown and a killed primary', () => {
  let etcd: EtcdProcess;
  let dir: string;

  before(async () => {
    etcd = await startEtcd();
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-workers-audit-'));
    writeFileSync(
      path.join(dir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources:\n  - group: ""\n    resources: ["configmaps"]\n- level: None\n',
    );
  });
  after(async () => {
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the primary writes and rotates every worker's audit events as whole lines, and SIGTERM stops every process", async () => {
    // each event carries the ConfigMap twice (request and response): 40 pass 1 MB
    const CREATES = 40;
    const logPath = path.join(dir, 'audit.log');
    // past 1 MB the file rotates: once, by the primary, between whole lines
    const kapi = await startWithWorkers(etcd, [
      '--audit-policy-file',
      path.join(dir, 'policy.yaml'),
      '--audit-log-path',
      logPath,
      '--audit-log-maxsize',
      '1',
    ]);
    let workers: number[] = [];
    try {
      workers = workerPids(kapi.pid);
      assert.equal(workers.length, 2);
      const ns = uniqueName('audit');
      await createNamespace(kapi.http, ns);
      const servedBy = new Set<string>();
      // bodies large enough that interleaved writes would show
      const payload = 'x'.repeat(20_000);
      for (let i = 0; i < CREATES; i++) {
        const res = await onFreshConnection(kapi, (http) =>
          http.post(`/api/v1/namespaces/${ns}/configmaps`, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `a-${i}` },
            data: { payload },
          }),
        );
        assert.equal(res.status, 201, res.body);
        servedBy.add(String(res.headers['kapi-replica']));
      }
      assert.equal(servedBy.size, 2, 'both workers served the writes');
    } finally {
      await kapi.stop();
    }
    assert.deepEqual(kapi.warnings, []);
    assert.deepEqual(workers.filter(alive), [], 'no worker outlives the primary');
    const files = readdirSync(dir).filter((f) => /^audit.*\.log$/.test(f));
    assert.ok(files.length >= 2, `rotated: ${files.join(', ')}`);
    const events = files.flatMap((f) =>
      readFileSync(path.join(dir, f), 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { verb: string; stage: string; objectRef?: { name?: string } }),
    );
    const created = events.filter((e) => e.verb === 'create' && e.stage === 'ResponseComplete' && e.objectRef?.name?.startsWith('a-'));
    assert.deepEqual(created.map((e) => e.objectRef?.name).sort(), Array.from({ length: CREATES }, (_, i) => `a-${i}`).sort());
  });

  it('workers whose primary is killed outright shut down by themselves', async () => {
    const kapi = await startWithWorkers(etcd);
    const workers = workerPids(kapi.pid);
    assert.equal(workers.length, 2);
    await kapi.kill({ onlyKapi: true });
    try {
      await waitFor('the workers to exit', () => workers.every((pid) => !alive(pid)), 60_000);
      assert.deepEqual(kapi.orphans(), []);
    } finally {
      await kapi.killOrphans();
      rmSync(kapi.dataDir, { recursive: true, force: true });
    }
  });
});
