// The watch soak (issue 3, done-when 3): 4 writers and 50 watchers spread over the 3
// replicas of a 3 + 3 + haproxy cluster for about a minute, while one replica is SIGKILLed
// and restarted and then the etcd leader, the member every replica talks to, is SIGKILLed and
// restarted.
//
// Writers write straight at the replicas and record every acknowledged write. Watchers list
// (a few instead watch with sendInitialEvents=true), then watch with bookmarks
// (namespace-scoped, label-selected across namespaces, or both, over HTTP/1.1 or HTTP/2,
// some with short timeoutSeconds so that they move often); whenever a stream ends they watch
// again from their last resourceVersion on the next replica, and
// never relist: nothing is compacted during the soak, so a 410 is a failure.
//
// Two readers make consistent LISTs on the replicas in turn all along. A few watchers go
// away while the replica is down and come back to it once it has restarted, from a
// resourceVersion older than its new watch cache.
//
// At the end, what really happened is read back from etcd (history-model.ts), and checked:
// every acknowledged write is there as acknowledged, every consistent read is the state at
// its resourceVersion and not older than a write acknowledged before it was sent, every
// watcher saw every change of its objects exactly once in resourceVersion order with the
// right contents and nothing else, and every replica lists exactly the final state.
//
// KAPI_SOAK_SECONDS (default 65) sets the length; KAPI_SOAK_FAULTS=extended adds more faults.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, jsonOf, sleep, uniqueName } from '../harness.js';
import { startCluster, etcdLeader, etcdRevision, makeEtcdLeader, type TestCluster } from './cluster.js';
import { Reflector } from './reflector.js';
import { Http2Sessions } from './watch-client.js';
import { Writer, GROUP_LABEL } from './writer.js';
import {
  expectedEvents,
  readTruth,
  witnessesOf,
  stateAt,
  validateReads,
  validateReflector,
  validateWrites,
  type Scope,
} from './history-model.js';
import { Reader } from './reader.js';

/** KAPI_SOAK_FAULTS=extended adds a frozen replica, an etcd without quorum and a graceful
 *  restart to the second half (run it longer, e.g. KAPI_SOAK_SECONDS=150) */
const EXTENDED = process.env.KAPI_SOAK_FAULTS === 'extended';
const SOAK_MS = Number(process.env.KAPI_SOAK_SECONDS ?? (EXTENDED ? 150 : 65)) * 1000;
const WATCHERS = 50;
const LATE_WATCHERS = 10;
const WRITERS = 4;
const GROUPS = 5;

describe('watch soak: 4 writers, 50 watchers, a replica and an etcd member killed', { timeout: SOAK_MS + 300_000 }, () => {
  let cluster: TestCluster;
  const namespaces = ['a', 'b', 'c', 'd'].map((x) => uniqueName(`soak-${x}`));

  before(async () => {
    // -v 3: each replica logs how it served each watch, for the diagnosis of a skipped change
    cluster = await startCluster({ kapiArgs: ['-v', '3'] });
    const c = cluster.lbClient();
    try {
      for (const ns of namespaces) await createNamespace(c, ns);
    } finally {
      c.close();
    }
  });
  after(async () => {
    await cluster?.stop();
  });

  it('every watcher sees every change exactly once, in order; no acknowledged write is lost', async (t) => {
    const servers = cluster.replicas.map((r) => r.url);
    const fromRev = await etcdRevision(cluster);
    const h2 = [new Http2Sessions(cluster.creds), new Http2Sessions(cluster.creds)];
    const log: string[] = [];
    const started = Date.now();
    const note = (s: string) => log.push(`${((Date.now() - started) / 1000).toFixed(1)}s ${s}`);

    // --- watchers ------------------------------------------------------------------------
    const watchers: { r: Reflector; scope: Scope }[] = [];
    const startWatcher = async (i: number): Promise<void> => {
      const kind = i % 5;
      const ns = namespaces[i % namespaces.length]!;
      const group = `g${i % GROUPS}`;
      const scope: Scope =
        kind <= 1
          ? { namespace: ns }
          : kind <= 3
            ? { label: { key: GROUP_LABEL, value: group } }
            : { namespace: ns, label: { key: GROUP_LABEL, value: group } };
      const r = new Reflector({
        name: `watcher ${i} (${scope.namespace ?? 'all namespaces'}${scope.label ? ` ${GROUP_LABEL}=${group}` : ''})`,
        creds: cluster.creds,
        servers,
        firstServer: i % servers.length,
        path: scope.namespace ? `/api/v1/namespaces/${scope.namespace}/configmaps` : '/api/v1/configmaps',
        labelSelector: scope.label ? `${GROUP_LABEL}=${group}` : undefined,
        http2: Math.floor(i / 3) % 2 === 0 ? h2[i % 2] : undefined,
        timeoutSeconds: i % 2 === 0 ? () => 5 + Math.floor(Math.random() * 10) : undefined,
        // one in seven gets its initial state from a watch (sendInitialEvents), not a LIST
        watchList: i % 7 === 3,
      });
      watchers.push({ r, scope });
      await r.start();
    };
    for (let i = 0; i < WATCHERS - LATE_WATCHERS; i++) {
      await startWatcher(i);
      await sleep(20);
    }
    note(`${watchers.length} watchers listening`);

    // --- writers -------------------------------------------------------------------------
    let stopWriting = false;
    const writers = Array.from(
      { length: WRITERS },
      (_, id) => new Writer({ id, creds: cluster.creds, servers, namespaces, groups: GROUPS, pauseMs: 15, targetObjects: 20 }),
    );
    const writing = writers.map((w) => w.run(() => stopWriting));
    const readers = [0, 1].map((first) => new Reader({ creds: cluster.creds, servers, namespaces, pauseMs: 10, first }));
    const reading = readers.map((r) => r.run(() => stopWriting));

    // --- late watchers and faults --------------------------------------------------------
    const late = (async () => {
      for (let j = 0; j < LATE_WATCHERS; j++) {
        await sleep(SOAK_MS / (LATE_WATCHERS + 4));
        await startWatcher(WATCHERS - LATE_WATCHERS + j);
      }
      note('late watchers listening');
    })();
    const at = async (fraction: number) => sleep(Math.max(0, started + SOAK_MS * fraction - Date.now()));
    const victim = cluster.replicas[1]!;
    await at(0.15);
    // a few watchers go away for as long as the victim is down, and come back to it: they
    // watch from a resourceVersion older than its new watch cache (served by etcd, then
    // handed over to the cache)
    const away = watchers.filter((_, i) => i % 5 <= 1).slice(0, 5);
    for (const w of away) w.r.pause();
    await victim.kill();
    note(`SIGKILLed ${victim.name}; ${away.length} watchers away`);
    await at(0.3);
    await victim.restart();
    const restartRev = await etcdRevision(cluster);
    const restartedAt = Date.now();
    for (const w of away) w.r.resume(1);
    note(`${victim.name} restarted and ready at revision ${restartRev}; the watchers that were away resume there`);
    await at(0.45);
    // the member every replica talks to (the first endpoint), made leader first: its death
    // breaks every replica's etcd streams and forces an election
    await makeEtcdLeader(cluster, 0);
    const member = cluster.etcd[0]!;
    const wasLeader = (await etcdLeader(cluster)) === 0;
    await member.kill();
    note(`SIGKILLed ${member.name}${wasLeader ? ', the etcd leader' : ' (leadership had moved on)'}`);
    await at(0.6);
    await member.restart();
    note(`${member.name} restarted`);
    if (EXTENDED) {
      // a replica frozen (its watches stall, its etcd streams go quiet), etcd without quorum,
      // and a graceful restart
      const frozen = cluster.replicas[2]!;
      await at(0.65);
      process.kill(frozen.pid, 'SIGSTOP');
      note(`SIGSTOPped ${frozen.name}`);
      await at(0.7);
      process.kill(frozen.pid, 'SIGCONT');
      note(`SIGCONTed ${frozen.name}`);
      await at(0.75);
      const two = [cluster.etcd[0]!, cluster.etcd[1]!];
      for (const m of two) await m.kill();
      note(`SIGKILLed ${two.map((m) => m.name).join(' and ')}: no quorum`);
      await at(0.8);
      await Promise.all(two.map((m) => m.restart()));
      note('quorum back');
      await at(0.85);
      await cluster.replicas[0]!.stop();
      note(`stopped ${cluster.replicas[0]!.name} (SIGTERM)`);
      await cluster.replicas[0]!.restart();
      note(`${cluster.replicas[0]!.name} restarted`);
    }
    await at(1);
    stopWriting = true;
    await Promise.all(writing);
    await Promise.all(reading);
    for (const r of readers) r.close();
    await late;
    note('writers stopped');

    // --- what really happened --------------------------------------------------------------
    const toRev = await etcdRevision(cluster);
    const truth = await readTruth(
      cluster.etcd.map((e) => e.url),
      '/registry',
      fromRev,
      toRev,
    );
    note(`etcd history: ${truth.changes.length} configmap changes in (${fromRev}, ${toRev}]`);

    // every watcher gets the chance to catch up with the end of the history
    const lagging: string[] = [];
    await Promise.all(
      watchers.map(async ({ r, scope }) => {
        const want = expectedEvents(truth, scope, r.listRv).length;
        try {
          await r.waitUntil(`${want} events`, () => r.events.length >= want || r.expired > 0, 60_000);
        } catch (err) {
          lagging.push((err as Error).message);
        }
      }),
    );
    await sleep(1000); // anything extra would arrive now
    await Promise.all(watchers.map(({ r }) => r.stop()));
    for (const s of h2) s.close();
    note('watchers stopped');

    // --- final state on every replica ----------------------------------------------------------
    const finalState = stateAt(truth, toRev);
    const stateProblems: string[] = [];
    for (let i = 0; i < cluster.replicas.length; i++) {
      const c = cluster.replicaClient(i);
      try {
        for (const ns of namespaces) {
          const res = await c.get(`/api/v1/namespaces/${ns}/configmaps`);
          if (res.status !== 200) {
            stateProblems.push(`replica ${i}: list ${ns}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
            continue;
          }
          const items = jsonOf<{ items: { metadata: { name: string; resourceVersion: string }; data?: { seq?: string } }[] }>(res).items;
          const want = [...finalState].filter(([k]) => k.startsWith(`${ns}/`));
          const got = new Map(items.map((it) => [`${ns}/${it.metadata.name}`, it]));
          if (got.size !== want.length) stateProblems.push(`replica ${i}: ${ns} lists ${got.size} configmaps, etcd has ${want.length}`);
          for (const [k, s] of want) {
            const g = got.get(k);
            if (!g || Number(g.metadata.resourceVersion) !== s.rv || g.data?.seq !== s.data.seq) {
              stateProblems.push(
                `replica ${i}: ${k}: listed ${g ? `rv ${g.metadata.resourceVersion} seq ${g.data?.seq}` : 'nothing'}, etcd has rv ${s.rv} seq ${s.data.seq}`,
              );
            }
          }
        }
      } finally {
        c.close();
      }
    }
    // the writers' own view: an object whose last write was acknowledged is as written
    const lastAcked = new Map<string, { seq: string; deleted: boolean; unknownAfter: boolean }>();
    for (const w of writers) {
      for (const rec of w.records) {
        const k = `${rec.namespace}/${rec.name}`;
        if (!rec.acked) {
          const cur = lastAcked.get(k);
          lastAcked.set(k, { seq: cur?.seq ?? rec.seq, deleted: cur?.deleted ?? false, unknownAfter: true });
        } else {
          lastAcked.set(k, { seq: rec.seq, deleted: rec.op === 'delete', unknownAfter: false });
        }
      }
    }
    for (const [k, last] of lastAcked) {
      if (last.unknownAfter) continue;
      const s = finalState.get(k);
      if (last.deleted && s) stateProblems.push(`${k}: deleted (acknowledged) but still in etcd`);
      if (!last.deleted && s?.data.seq !== last.seq)
        stateProblems.push(`${k}: last acknowledged write ${last.seq}, etcd has ${s ? s.data.seq : 'nothing'}`);
    }

    // --- verdict ---------------------------------------------------------------------------------
    const allWrites = writers.flatMap((w) => w.records);
    const writeProblems = validateWrites(allWrites, truth);
    const reads = readers.flatMap((r) => r.records);
    const readProblems = validateReads(reads, allWrites, truth);
    const readFailures = new Map<string, number>();
    for (const r of reads)
      if (r.status !== 200) readFailures.set(String(r.status || r.error), (readFailures.get(String(r.status || r.error)) ?? 0) + 1);
    const watchProblems = watchers.flatMap(({ r, scope }) => validateReflector(r, truth, scope));
    // what the replica's watch cache said about watches from that resourceVersion, and
    // about keeping up with etcd
    const watchCacheTrace = (server: string, fromRv: number): string[] => {
      const replica = cluster.replicas.find((x) => x.url === server);
      if (!replica) return [];
      const about = (l: string) =>
        l.includes(`resourceVersion=${fromRv} `) ||
        l.includes(`resourceVersion="${fromRv}" `) ||
        /progress from etcd|relisted|etcd watch ended|arrived after progress/.test(l);
      return cluster
        .logLines(replica.name, /watch cache: |watch ended/)
        .filter(about)
        .slice(0, 20)
        .map((l) => `${replica.name}: ${l}`);
    };
    // a change a stream skipped: did the other watches on that replica see it?
    for (const { r, scope } of watchers) {
      const want = expectedEvents(truth, scope, r.listRv);
      const i = want.findIndex((w, n) => r.events[n]?.rv !== w.rv);
      const skipped = want[i];
      const next = r.events[i];
      if (!skipped || !next || next.rv < skipped.rv) continue;
      const stream = r.streams[next.stream]!;
      const startedAt = ((stream.startedAt - started) / 1000).toFixed(1);
      watchProblems.push(
        `${r.opts.name} skipped rv ${skipped.rv} on stream ${next.stream} (${r.opts.http2 ? 'HTTP/2' : 'HTTP/1.1'}, sent at ${startedAt}s)`,
        ...witnessesOf(skipped.rv, stream.server, watchers, truth).map((l) => `  ${l}`),
        ...watchCacheTrace(stream.server, stream.fromRv).map((l) => `  ${l}`),
      );
    }
    const unexpected = writers.flatMap((w) => w.unexpected);
    const streams = watchers.flatMap(({ r }) => r.streams);
    const cut = streams.filter((s) => s.end?.kind === 'cut').length;
    const catchUp = streams.filter((s) => s.server === victim.url && s.startedAt >= restartedAt && s.fromRv < restartRev).length;
    const summary = [
      ...log,
      `writes: ${writers.reduce((n, w) => n + w.acknowledged, 0)} acknowledged, ${writers.reduce((n, w) => n + w.unknown, 0)} with unknown outcome, ${writers.reduce((n, w) => n + w.retriedUnsent, 0)} resent after a refused connection`,
      `watch: ${watchers.length} watchers, ${watchers.reduce((n, { r }) => n + r.events.length, 0)} events, ${watchers.reduce((n, { r }) => n + r.bookmarks.length, 0)} bookmarks, ${streams.length} streams (${cut} cut, ${streams.filter((s) => s.status !== 200).length} refused or failed, ${catchUp} on the restarted replica from before its restart), 410s: ${watchers.reduce((n, { r }) => n + r.expired, 0)}`,
      `HTTP/2 streams whose first data came before node emitted their response headers: ${h2.reduce((n, s) => n + s.dataBeforeResponse, 0)}`,
      `reads: ${reads.length} consistent lists, ${reads.filter((r) => r.status === 200).length} answered; refused or failed: ${JSON.stringify(Object.fromEntries(readFailures))}`,
    ];
    // what the replicas warned about (a late event after trusted progress would show here)
    for (const r of cluster.replicas) {
      for (const l of cluster
        .logLines(r.name, /watch cache: (?!watch |progress from etcd)|etcd watch listener threw|etcd-io\/etcd#15220|request handler failed/)
        .slice(0, 5))
        summary.push(`${r.name}: ${l}`);
    }
    for (const line of summary) t.diagnostic(line);
    const all = [...unexpected, ...writeProblems, ...readProblems, ...lagging, ...watchProblems, ...stateProblems];
    for (const w of writers) w.close();
    assert.ok(truth.changes.length > 500, `the soak wrote too little to prove anything (${truth.changes.length} changes)`);
    assert.deepEqual(all.slice(0, 40), [], `${all.length} problems:\n${all.slice(0, 40).join('\n')}\n--\n${summary.join('\n')}`);
  });
});
