// Done-when 4: `kubectl get cm --chunk-size=2` returns all of 7 objects; a raw list with
// `limit` carries `continue` and `remainingItemCount`; the list revision stays constant
// across chunks (and the later chunks are a snapshot at that revision).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect as http2Connect } from 'node:http2';
import { gunzipSync } from 'node:zlib';
import { jsonOf, kubectl, kubectlOk, startKapi, uniqueName, type KapiProcess } from './harness.js';
import { createNamespace } from './harness.js';
import { loadKubeconfig } from './http-client.js';

interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}
interface CmList {
  kind: string;
  apiVersion: string;
  metadata: ListMeta;
  items: { metadata: { name: string; resourceVersion: string } }[];
}

describe('chunked lists', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('chunk');
  const names = Array.from({ length: 7 }, (_, i) => `cm-${i}`);
  const base = () => `/api/v1/namespaces/${ns}/configmaps`;
  /** configmaps kube itself may put into a namespace (kube-root-ca.crt) are not ours */
  const ours = (list: string[]) => list.filter((n) => n.startsWith('cm-'));

  before(async () => {
    kapi = await startKapi();
    await createNamespace(kapi.http, ns);
    for (const name of names) {
      const r = await kapi.http.post(base(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { set: 'seven' } } });
      assert.equal(r.status, 201, r.body);
    }
  });
  after(async () => {
    await kapi?.stop();
  });

  it('kubectl get cm --chunk-size=2 returns all 7, fetched in several requests', async () => {
    const r = await kubectl(['get', 'cm', '-n', ns, '--chunk-size=2', '-o', 'name', '-v=6'], { kubeconfig: kapi.kubeconfig });
    assert.equal(r.code, 0, r.stderr);
    const got = ours(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => l.replace(/^configmap\//, '')),
    );
    assert.deepEqual(got, names);
    const requests = r.stderr.split('\n').filter((l) => /\/configmaps\?[^\s"]*limit=2/.test(l));
    assert.ok(requests.length >= 4, `kubectl made ${requests.length} chunk requests:\n${r.stderr}`);
    assert.ok(
      requests.slice(1).every((l) => /continue=/.test(l)),
      requests.join('\n'),
    );
  });

  it('kubectl get cm --chunk-size=2 prints one table for all chunks', async () => {
    const out = await kubectlOk(['get', 'cm', '-n', ns, '--chunk-size=2', '-l', 'set=seven'], { kubeconfig: kapi.kubeconfig });
    const lines = out.trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+DATA\s+AGE$/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(/\s+/)[0]),
      names,
    );
  });

  it('a raw list with limit=2 carries continue and remainingItemCount at one revision', async () => {
    const first = await kapi.http.get(`${base()}?limit=2`);
    assert.equal(first.status, 200, first.body);
    const page1 = jsonOf<CmList>(first);
    assert.equal(page1.kind, 'ConfigMapList');
    assert.equal(page1.apiVersion, 'v1');
    assert.deepEqual(Object.keys(page1.metadata), ['resourceVersion', 'continue', 'remainingItemCount']);
    const total = ours((await listAll()).map((i) => i.metadata.name)).length + (await extra()).length;
    assert.equal(page1.items.length, 2);
    assert.ok(page1.metadata.continue, 'continue token on the first page');
    assert.equal(page1.metadata.remainingItemCount, total - 2);
    const listRv = page1.metadata.resourceVersion;
    assert.match(listRv ?? '', /^\d+$/);

    // a write between chunks: the later chunks are still the snapshot at listRv
    const late = await kapi.http.post(base(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-late' } });
    assert.equal(late.status, 201, late.body);
    const changed = await kapi.http.patch(`${base()}/cm-6`, { data: { changed: 'yes' } });
    assert.equal(changed.status, 200, changed.body);

    const seen = [...page1.items.map((i) => i.metadata.name)];
    let token: string = page1.metadata.continue ?? '';
    let expectRemaining = total - 2;
    let pages = 1;
    while (token) {
      const res = await kapi.http.get(`${base()}?limit=2&continue=${encodeURIComponent(token)}`);
      assert.equal(res.status, 200, res.body);
      const page = jsonOf<CmList>(res);
      pages++;
      assert.equal(page.metadata.resourceVersion, listRv, `chunk ${pages} revision`);
      seen.push(...page.items.map((i) => i.metadata.name));
      expectRemaining -= page.items.length;
      if (page.metadata.continue) {
        assert.equal(page.items.length, 2);
        assert.equal(page.metadata.remainingItemCount, expectRemaining, `chunk ${pages} remainingItemCount`);
      } else {
        assert.equal(page.metadata.remainingItemCount, undefined, 'the last chunk has no remainingItemCount');
        assert.equal(expectRemaining, 0);
      }
      const cm6 = page.items.find((i) => i.metadata.name === 'cm-6');
      if (cm6) assert.ok(Number(cm6.metadata.resourceVersion) <= Number(listRv), 'cm-6 as it was at the list revision');
      token = page.metadata.continue ?? '';
    }
    assert.equal(pages, Math.ceil(total / 2));
    assert.deepEqual(ours(seen), names, 'every object once, in key order, without the late one');
    assert.equal(seen.includes('cm-late'), false);
  });

  it('a limit larger than the collection returns everything without continue', async () => {
    const res = jsonOf<CmList>(await kapi.http.get(`${base()}?limit=500&labelSelector=set%3Dseven`));
    assert.equal(res.items.length, 7);
    assert.equal(res.metadata.continue, undefined);
    assert.equal(res.metadata.remainingItemCount, undefined);
  });

  it('with a label selector, limit still pages and never returns non-matching items', async () => {
    const seen: string[] = [];
    let token: string | undefined = '';
    do {
      const q: string = `limit=3&labelSelector=set%3Dseven${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
      const res = await kapi.http.get(`${base()}?${q}`);
      assert.equal(res.status, 200, res.body);
      const page = jsonOf<CmList>(res);
      seen.push(...page.items.map((i) => i.metadata.name));
      token = page.metadata.continue;
    } while (token);
    assert.deepEqual(seen, names);
  });

  it('a garbled continue token is 400 BadRequest', async () => {
    const res = await kapi.http.get(`${base()}?limit=2&continue=not-a-token`);
    assert.equal(res.status, 400, res.body);
    const s = jsonOf<{ kind: string; reason: string; code: number }>(res);
    assert.equal(s.kind, 'Status');
    assert.equal(s.reason, 'BadRequest');
    assert.equal(s.code, 400);
  });

  it('a list of more than 128 KiB streams whole over HTTP/1.1 and HTTP/2, plain and gzip-compressed, and to kubectl', async () => {
    const bigNs = uniqueName('biglist');
    await createNamespace(kapi.http, bigNs);
    const filler = 'x'.repeat(40 * 1024);
    // one item whose text needs Go's escapes: written as text between items written as bytes
    const note = 'a <b> & é 😀';
    const made = Array.from({ length: 8 }, (_, i) => `big-${i}`);
    for (const [i, name] of made.entries()) {
      const data = i === 3 ? { filler, note } : { filler: filler + i };
      const r = await kapi.http.post(`/api/v1/namespaces/${bigNs}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
        data,
      });
      assert.equal(r.status, 201, r.body);
    }
    const path = `/api/v1/namespaces/${bigNs}/configmaps`;
    type BigList = { items: { metadata: { name: string }; data?: Record<string, string> }[] };
    const assertWhole = (body: string, how: string): void => {
      assert.ok(body.endsWith('}\n'), `${how}: Go's trailing newline`);
      const items = (JSON.parse(body) as BigList).items.filter((i) => i.metadata.name.startsWith('big-'));
      assert.deepEqual(
        items.map((i) => i.metadata.name),
        made,
        how,
      );
      for (const [i, item] of items.entries()) {
        assert.deepEqual(item.data, i === 3 ? { filler, note } : { filler: filler + i }, `${how}: ${item.metadata.name}`);
      }
    };

    const plain = await kapi.http.get(path);
    assert.equal(plain.status, 200, plain.body);
    assert.equal(plain.headers['content-length'], undefined, 'streamed, not written whole');
    assertWhole(plain.body, 'HTTP/1.1');
    const gzipped = await kapi.http.get(`${path}?resourceVersion=0`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.ok(gzipped.bytes);
    assertWhole(gunzipSync(gzipped.bytes).toString('utf8'), 'HTTP/1.1 gzip');

    const creds = loadKubeconfig(kapi.kubeconfig);
    const session = http2Connect(kapi.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
    try {
      for (const encoding of ['identity', 'gzip']) {
        const body = await new Promise<Buffer>((resolve, reject) => {
          const stream = session.request({ ':path': path, accept: 'application/json', 'accept-encoding': encoding });
          const chunks: Buffer[] = [];
          let gzip = false;
          stream.on('response', (h) => (gzip = h['content-encoding'] === 'gzip'));
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => resolve(gzip ? gunzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks)));
          stream.on('error', reject);
          stream.end();
        });
        assertWhole(body.toString('utf8'), `HTTP/2 ${encoding}`);
      }
    } finally {
      session.close();
    }

    // kubectl: HTTP/2, gzip-compressed
    assertWhole(await kubectlOk(['get', 'cm', '-n', bigNs, '-o', 'json'], { kubeconfig: kapi.kubeconfig }), 'kubectl');
  });

  async function listAll(): Promise<CmList['items']> {
    return jsonOf<CmList>(await kapi.http.get(base())).items;
  }
  /** objects in the namespace that are not ours (kube-root-ca.crt if kapi publishes it) */
  async function extra(): Promise<string[]> {
    return (await listAll()).map((i) => i.metadata.name).filter((n) => !n.startsWith('cm-'));
  }
});
