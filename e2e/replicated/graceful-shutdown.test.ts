// Graceful shutdown of one replica (issue 3, "Graceful shutdown"): SIGTERM with
// --shutdown-delay-duration=3s. /readyz fails at once while the API keeps serving; a request
// still in flight when the listener closes is answered; every watch on the replica ends
// cleanly (the response ends, no ERROR event), and its watcher resumes on another replica
// from its last resourceVersion, without a relist and without missing an event (checked
// against etcd's history, as in the soak).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import type { IncomingMessage } from 'node:http';
import { createNamespace, sleep, uniqueName, waitFor } from '../harness.js';
import { startCluster, etcdRevision, type TestCluster } from './cluster.js';
import { Reflector } from './reflector.js';
import { Http2Sessions } from './watch-client.js';
import { Writer } from './writer.js';
import { expectedEvents, readTruth, validateReflector, validateWrites } from './history-model.js';

const VICTIM = 0;

/** a POST whose body is sent in two halves: the server has the request, not yet its end */
function halfSentPost(cluster: TestCluster, path: string, body: string): { finish(): Promise<{ status: number; body: string }> } {
  const url = new URL(cluster.replicas[VICTIM]!.url);
  const payload = Buffer.from(body);
  const req = https.request({
    hostname: url.hostname,
    port: url.port,
    method: 'POST',
    path,
    agent: false,
    ca: cluster.creds.ca,
    cert: cluster.creds.cert,
    key: cluster.creds.key,
    headers: { 'content-type': 'application/json', 'content-length': String(payload.length), accept: 'application/json' },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
  });
  response.catch(() => {});
  req.write(payload.subarray(0, payload.length >> 1));
  return {
    finish: () => {
      req.end(payload.subarray(payload.length >> 1));
      return response;
    },
  };
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('graceful shutdown of a replica', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  const ns = uniqueName('graceful');

  before(async () => {
    cluster = await startCluster({ kapiArgs: ['--shutdown-delay-duration=3s'] });
    const c = cluster.lbClient();
    try {
      await createNamespace(c, ns);
    } finally {
      c.close();
    }
  });
  after(async () => {
    await cluster?.stop();
  });

  it('SIGTERM: /readyz fails, in-flight requests finish, watches end cleanly and resume elsewhere without a relist', async (t) => {
    const victim = cluster.replicas[VICTIM]!;
    const victimClient = cluster.replicaClient(VICTIM);
    const servers = cluster.replicas.map((r) => r.url);
    const fromRev = await etcdRevision(cluster);
    const h2 = new Http2Sessions(cluster.creds);

    // watchers that all start on the victim, half over HTTP/2
    const watchers = Array.from(
      { length: 8 },
      (_, i) =>
        new Reflector({
          name: `watcher ${i} (${i % 2 ? 'HTTP/1.1' : 'HTTP/2'})`,
          creds: cluster.creds,
          servers,
          // the list goes to the replica before the victim, the watch after it to the victim
          firstServer: (VICTIM + servers.length - 1) % servers.length,
          path: `/api/v1/namespaces/${ns}/configmaps`,
          http2: i % 2 ? undefined : h2,
        }),
    );
    for (const w of watchers) await w.start();
    await Promise.all(
      watchers.map((w) =>
        waitFor(
          `${w.opts.name} watching on the victim`,
          () => (w.streams.length > 0 && w.streams.at(-1)!.status === 200) || undefined,
          15_000,
        ),
      ),
    );
    const victimStreams = watchers.map((w) => w.streams.length - 1);
    for (let i = 0; i < watchers.length; i++) {
      const s = watchers[i]!.streams[victimStreams[i]!]!;
      assert.equal(s.server, servers[VICTIM], `${watchers[i]!.opts.name} watches on the victim`);
    }

    // writes keep coming through the other replicas all along
    let stop = false;
    const writer = new Writer({
      id: 0,
      creds: cluster.creds,
      servers: servers.filter((_, i) => i !== VICTIM),
      namespaces: [ns],
      groups: 2,
      pauseMs: 20,
      targetObjects: 10,
    });
    const writing = writer.run(() => stop);
    await sleep(1000);

    const inFlight = halfSentPost(
      cluster,
      `/api/v1/namespaces/${ns}/configmaps`,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'in-flight' }, data: { a: 'b' } }),
    );
    await sleep(200);
    const stopping = victim.stop(); // SIGTERM, resolves when the process has exited

    // /readyz fails while the API still answers
    const readyz = await waitFor(
      '/readyz to fail on the victim',
      async () => {
        const r = await victimClient.get('/readyz?verbose');
        return r.status !== 200 ? r : undefined;
      },
      10_000,
      20,
    );
    assert.equal(readyz.status, 500, readyz.body);
    assert.match(readyz.body, /\[-\]shutdown failed/);
    const during = await victimClient.get(`/api/v1/namespaces/${ns}/configmaps`);
    assert.equal(during.status, 200, 'the API keeps serving during the shutdown delay');
    victimClient.close();

    // the listener closes after the delay; the request begun before is still answered
    const port = Number(new URL(victim.url).port);
    await waitFor('the victim to stop accepting connections', () => refusesConnections(port), 20_000, 50);
    // the rest of the body comes later: the replica must wait for it
    await sleep(2000);
    const answered = await inFlight.finish();
    assert.equal(answered.status, 201, `the in-flight request: ${answered.status} ${answered.body}`);

    await stopping;
    await sleep(1500);
    stop = true;
    await writing;
    writer.close();

    // every watcher moved on and caught up
    const toRev = await etcdRevision(cluster);
    const truth = await readTruth(
      cluster.etcd.map((e) => e.url),
      '/registry',
      fromRev,
      toRev,
    );
    for (const w of watchers) {
      const want = expectedEvents(truth, { namespace: ns }, w.listRv).length;
      await w.waitUntil(`${want} events`, () => w.events.length >= want, 30_000);
    }
    await sleep(500);
    await Promise.all(watchers.map((w) => w.stop()));
    h2.close();

    const problems: string[] = [...writer.unexpected, ...validateWrites(writer.records, truth)];
    for (let i = 0; i < watchers.length; i++) {
      const w = watchers[i]!;
      const s = w.streams[victimStreams[i]!]!;
      if (s.end?.kind !== 'clean') problems.push(`${w.opts.name}: its watch on the victim ended ${JSON.stringify(s.end)}`);
      if (s.error) problems.push(`${w.opts.name}: its watch on the victim sent ERROR ${JSON.stringify(s.error)}`);
      const next = w.streams[victimStreams[i]! + 1];
      if (!next) problems.push(`${w.opts.name}: did not watch again`);
      else {
        if (next.server === servers[VICTIM]) problems.push(`${w.opts.name}: watched the victim again`);
        const seenBefore = w.events.filter((e) => e.stream <= victimStreams[i]!).at(-1)?.rv ?? w.listRv;
        if (next.fromRv < seenBefore) problems.push(`${w.opts.name}: resumed from ${next.fromRv}, before its last event ${seenBefore}`);
      }
      problems.push(...validateReflector(w, truth, { namespace: ns }));
    }
    const eventsOnVictim = watchers.reduce((n, w, i) => n + w.streams[victimStreams[i]!]!.events, 0);
    t.diagnostic(
      `${writer.acknowledged} writes; ${eventsOnVictim} events delivered by the victim before it went, ${watchers.reduce((n, w) => n + w.events.length, 0)} in all`,
    );
    assert.ok(eventsOnVictim > 0, 'the watches on the victim delivered events before the shutdown');
    assert.deepEqual(problems, []);
  });
});
