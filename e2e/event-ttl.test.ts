// --event-ttl: kapi writes Events (core/v1 and events.k8s.io/v1, one storage) with an etcd
// lease, so etcd deletes them by itself once the TTL has passed. etcdctl watching the keys
// shows the lease on each write and etcd's own DELETE; `kubectl get events -w` prints them
// DELETED; `kubectl get events` finds them gone; a ConfigMap written alongside stays, without a
// lease. Expiry is awaited by polling with generous deadlines, never asserted on timing.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  createNamespace,
  etcdctl,
  etcdRevision,
  kubectlOk,
  kubectlSpawn,
  startEtcd,
  startKapi,
  uniqueName,
  waitFor,
  type EtcdProcess,
  type KapiProcess,
} from './harness.js';

const coreEvent = (ns: string, name: string) => `apiVersion: v1
kind: Event
metadata:
  name: ${name}
  namespace: ${ns}
involvedObject:
  kind: ConfigMap
  name: kept
  namespace: ${ns}
reason: CoreTtlReason
message: a core/v1 event that expires
type: Normal
source:
  component: e2e
`;

const eventsV1Event = (ns: string, name: string) => `apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: ${name}
  namespace: ${ns}
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: example.com/e2e
reportingInstance: e2e-1
action: Testing
reason: NewTtlReason
note: an events.k8s.io/v1 event that expires
type: Normal
regarding:
  kind: ConfigMap
  name: kept
  namespace: ${ns}
`;

const configMap = (ns: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: kept
  namespace: ${ns}
data:
  k: v
`;

interface EtcdWatchEvent {
  type?: number;
  kv: { key: string; lease?: number | string };
}

/** `etcdctl watch --prefix <prefix> -w json`, stopped by PID */
class EtcdctlWatch {
  private readonly child: ChildProcess;
  private out = '';

  /** from revision `from` on, so nothing written after it is missed however slowly etcdctl starts */
  constructor(endpoint: string, prefix: string, from: number) {
    this.child = spawn('etcdctl', ['--endpoints', endpoint, 'watch', '--prefix', prefix, `--rev=${from}`, '-w', 'json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ETCDCTL_API: '3' },
    });
    this.child.stdout!.on('data', (b: Buffer) => (this.out += b.toString()));
    this.child.stderr!.on('data', (b: Buffer) => (this.out += b.toString()));
  }

  /** every event seen so far, with its key decoded */
  events(): { type: 'PUT' | 'DELETE'; key: string; lease: string }[] {
    const all: { type: 'PUT' | 'DELETE'; key: string; lease: string }[] = [];
    for (const line of this.out.split('\n')) {
      if (!line.startsWith('{')) continue;
      // lease ids do not fit a JS number: keep them as the digits etcdctl printed
      const quoted = line.replace(/"lease":(\d+)/g, '"lease":"$1"');
      const msg = JSON.parse(quoted) as { Events?: EtcdWatchEvent[] };
      for (const e of msg.Events ?? []) {
        all.push({
          type: e.type === 1 ? 'DELETE' : 'PUT',
          key: Buffer.from(e.kv.key, 'base64').toString(),
          lease: String(e.kv.lease ?? '0'),
        });
      }
    }
    return all;
  }

  output(): string {
    return this.out;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(child.pid!, 'SIGTERM');
    await done;
  }
}

describe('event TTL (--event-ttl=3s)', () => {
  let etcd: EtcdProcess;
  let kapi: KapiProcess;
  const ns = uniqueName('event-ttl');

  before(async () => {
    etcd = await startEtcd();
    kapi = await startKapi({ etcdServers: etcd.endpoint, extraArgs: ['--event-ttl=3s'] });
    await createNamespace(kapi.http, ns);
  });

  after(async () => {
    await kapi?.stop();
    await etcd?.stop();
  });

  it('Events of both APIs carry a lease, disappear by themselves and are watched DELETED; a ConfigMap stays', async () => {
    const opts = { kubeconfig: kapi.kubeconfig };
    const etcdWatch = new EtcdctlWatch(etcd.endpoint, `/registry/events/${ns}/`, (await etcdRevision(etcd.endpoint)) + 1);
    const kubectlWatch = kubectlSpawn(['get', 'events', '-n', ns, '-w', '--output-watch-events'], opts);
    try {
      // the kubectl watcher is listening once it prints an Event: write short-lived sentinel
      // Events until one shows up (each lives only 3 s, so one may be gone before kubectl lists)
      let sentinels = 0;
      await waitFor(
        'kubectl get events -w to print a sentinel Event',
        async () => {
          if (/SentinelReason/.test(kubectlWatch.stdout())) return true;
          const res = await kapi.http.post(`/api/v1/namespaces/${ns}/events`, {
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { name: `sentinel-${++sentinels}` },
            involvedObject: { kind: 'ConfigMap', name: 'kept', namespace: ns },
            reason: 'SentinelReason',
            message: 'the watcher is listening',
          });
          assert.equal(res.status, 201, res.body);
          return false;
        },
        60_000,
        1000,
      );
      await kubectlOk(['create', '-f', '-'], { ...opts, input: configMap(ns) });
      await kubectlOk(['create', '-f', '-'], { ...opts, input: coreEvent(ns, 'core-event') });
      await kubectlOk(['create', '-f', '-'], { ...opts, input: eventsV1Event(ns, 'new-event') });

      // etcd saw each Event written with a lease, then deleted each by itself
      const coreKey = `/registry/events/${ns}/core-event`;
      const newKey = `/registry/events/${ns}/new-event`;
      await waitFor(
        'etcd to delete both Events',
        () => {
          const deleted = etcdWatch
            .events()
            .filter((e) => e.type === 'DELETE')
            .map((e) => e.key);
          return deleted.includes(coreKey) && deleted.includes(newKey);
        },
        120_000,
        200,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\netcdctl watch:\n${etcdWatch.output()}`);
      });
      const puts = etcdWatch.events().filter((e) => e.type === 'PUT');
      for (const key of [coreKey, newKey]) {
        const put = puts.find((e) => e.key === key);
        assert.ok(put, `etcd saw ${key} written`);
        assert.notEqual(put.lease, '0', `${key} was written with a lease`);
      }

      // kubectl's watch prints both deletions (its table shows reason and message, not the name)
      await kubectlWatch.waitForOutput(/^DELETED\s.*CoreTtlReason/m, 60_000);
      await kubectlWatch.waitForOutput(/^DELETED\s.*NewTtlReason/m, 60_000);
      const rows = kubectlWatch.stdout().split('\n');
      assert.ok(
        rows.some((l) => /^ADDED\s.*CoreTtlReason/.test(l)),
        kubectlWatch.stdout(),
      );
      assert.ok(
        rows.some((l) => /^ADDED\s.*NewTtlReason/.test(l)),
        kubectlWatch.stdout(),
      );

      // both APIs list nothing any more
      await waitFor(
        'kubectl get events to find none',
        async () => (await kubectlOk(['get', 'events', '-n', ns, '-o', 'name'], opts)).trim() === '',
        60_000,
        500,
      );
      assert.equal((await kubectlOk(['get', 'events.v1.events.k8s.io', '-n', ns, '-o', 'name'], opts)).trim(), '');

      // the ConfigMap written alongside is still there, and has no lease in etcd
      assert.equal((await kubectlOk(['get', 'configmap', 'kept', '-n', ns, '-o', 'jsonpath={.data.k}'], opts)).trim(), 'v');
      const cm = await etcdctl(etcd.endpoint, ['get', `/registry/configmaps/${ns}/kept`, '-w', 'json']);
      assert.equal(cm.code, 0, cm.stderr);
      const kv = (JSON.parse(cm.stdout.replace(/"lease":(\d+)/g, '"lease":"$1"')) as { kvs: { lease?: string }[] }).kvs;
      assert.equal(kv.length, 1);
      assert.equal(kv[0]!.lease ?? '0', '0', 'the ConfigMap has no lease');
    } finally {
      await kubectlWatch.stop();
      await etcdWatch.stop();
    }
  });
});
