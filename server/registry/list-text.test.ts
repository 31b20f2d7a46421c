// The lists (and objects read by name) written from stored texts are byte for byte the lists
// decoded and encoded: every object, kind, selection and page, over the watch cache, including
// texts written by someone else (another field order, whitespace, escapes and numbers
// JSON.stringify writes otherwise).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEtcdClient } from '../../storage/etcd/client.js';
import type { EtcdClient } from '../../storage/etcd/types.js';
import { createEtcd3Store } from '../../storage/etcd3/store.js';
import { createCacheFeed, type CacheFeed } from '../../storage/cacher/index.js';
import type { Storage } from '../../storage/interface.js';
import { startEtcd, type EtcdProcess } from '../../storage/testing/etcd-server.js';
import { loadCatalog } from '../apis/catalog.js';
import { encodeJson } from '../request/encode.js';
import { createRegistry, type Registry } from './registry.js';
import type { ListRequestOptions, RESTResource } from './rest.js';
import { ctx } from './testing/harness.js';

describe('lists from stored texts', { timeout: 120_000 }, () => {
  let etcd: EtcdProcess;
  let client: EtcdClient;
  let store: Storage;
  let feed: CacheFeed;
  let registry: Registry;
  const rest = (group: string, version: string, resource: string): RESTResource => {
    const r = registry.lookup(group, version, resource);
    assert.ok(r);
    return r;
  };

  /** the list decoded and encoded, and the list edited from the stored texts */
  async function bothWays(
    r: RESTResource,
    namespace: string,
    opts: ListRequestOptions,
  ): Promise<{ decoded: string; edited?: string; preparedObject: string }> {
    const decoded = encodeJson(await r.list(ctx(namespace), opts));
    const prepared = await r.openList!(ctx(namespace), opts);
    const text = prepared.jsonText();
    return {
      decoded,
      edited: text ? Buffer.concat([...text].map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString() + '\n' : undefined,
      preparedObject: encodeJson(prepared.toObject()),
    };
  }

  async function assertSame(r: RESTResource, namespace: string, opts: ListRequestOptions, edited = true): Promise<string> {
    // twice: the first list checks each text, the second uses the edits it found
    for (const round of [1, 2]) {
      const out = await bothWays(r, namespace, opts);
      assert.equal(out.preparedObject, out.decoded, `round ${round}: ${JSON.stringify(opts)}`);
      if (edited) {
        assert.ok(out.edited !== undefined, `round ${round}: no text for ${JSON.stringify(opts)}`);
        assert.equal(out.edited, out.decoded, `round ${round}: ${JSON.stringify(opts)}`);
      } else {
        assert.equal(out.edited, undefined);
      }
    }
    return (await bothWays(r, namespace, opts)).decoded;
  }

  before(async () => {
    etcd = await startEtcd();
    client = createEtcdClient({ endpoints: [etcd.endpoint] });
    store = createEtcd3Store(client, { prefix: '/registry' });
    feed = createCacheFeed(client, store, { prefix: '/registry' });
    registry = createRegistry({ resources: loadCatalog().resources(), storageFor: (prefix) => feed.cacherFor(prefix) });
    await feed.ready;
    const namespaces = rest('', 'v1', 'namespaces');
    for (const name of ['texts', 'empty']) await namespaces.create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const configMaps = rest('', 'v1', 'configmaps');
    for (let i = 0; i < 40; i++) {
      await configMaps.create(ctx('texts'), {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: `cm-${String(i).padStart(2, '0')}`,
          labels: i % 3 === 0 ? { tier: 'a' } : { tier: 'b', n: String(i) },
          ...(i % 4 === 0 ? { annotations: { note: 'x <y> & "z" \u2028 é 😀' } } : {}),
          ...(i % 5 === 0 ? { finalizers: ['example.com/keep'] } : {}),
        },
        data: i % 7 === 0 ? {} : { key: `value ${i} \\ "quoted" \n line`, html: '<b>&amp;</b>' },
        ...(i % 6 === 0 ? { immutable: true } : {}),
      });
    }
    const pods = rest('', 'v1', 'pods');
    for (let i = 0; i < 5; i++) {
      await pods.create(ctx('texts'), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `pod-${i}`,
          labels: { app: 'web' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-1', controller: true }],
        },
        spec: {
          containers: [
            { name: 'c', image: 'nginx:1.25', resources: { limits: { cpu: '500m', memory: '1Gi' } }, ports: [{ containerPort: 8080 }] },
          ],
          tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
        },
      });
    }
    await rest('apps', 'v1', 'deployments').create(ctx('texts'), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    // texts no kapi would write: each must still list as the decoder sees it
    const odd = [
      '{ "kind": "ConfigMap", "apiVersion": "v1", "metadata": { "name": "odd-spaces", "namespace": "texts" } }',
      '{"apiVersion":"v1","metadata":{"namespace":"texts","name":"odd-order","labels":{"tier":"a"}},"kind":"ConfigMap","data":{"a":"b"}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"odd-escapes","namespace":"texts"},"data":{"a":"\\u0041\\/"}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"odd-dup","namespace":"texts","name":"odd-dup"},"data":{"a":"1","a":"2"}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"odd-rv","namespace":"texts","resourceVersion":"5"}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"odd-extra","namespace":"texts","zzz":1,"uid":"u"},"x":1.50,"y":1e2}',
      '{"kind":"ConfigMap","apiVersion":"v1","data":{"z":"1"},"metadata":{"name":"odd-late","namespace":"texts"}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"odd-empty-rest","namespace":"texts"},"status":{},"spec":{}}',
    ];
    for (const [i, text] of odd.entries()) {
      const name = (JSON.parse(text) as { metadata: { name: string } }).metadata.name;
      await client.put(Buffer.from(`/registry/configmaps/texts/${name}`), Buffer.from(text));
      assert.ok(i >= 0);
    }
  });

  after(async () => {
    feed?.close();
    await store?.close();
    client?.close();
    await etcd?.stop();
  });

  it('writes every list of the storage version as the decoder and encoder do', async () => {
    const configMaps = rest('', 'v1', 'configmaps');
    const all = await assertSame(configMaps, 'texts', {});
    assert.match(all, /odd-escapes/);
    await assertSame(configMaps, 'texts', { resourceVersion: '0' });
    await assertSame(configMaps, '', {});
    await assertSame(configMaps, 'empty', {});
    await assertSame(configMaps, 'texts', { labelSelector: 'tier=a' });
    await assertSame(configMaps, 'texts', { labelSelector: 'tier notin (a),n' });
    await assertSame(configMaps, 'texts', { labelSelector: 'nothing=here' });
    await assertSame(configMaps, 'texts', { fieldSelector: 'metadata.name=cm-03' });
    await assertSame(configMaps, 'texts', { fieldSelector: 'metadata.name!=cm-03' });
    await assertSame(configMaps, 'texts', { resourceVersion: '0', limit: 7 });
    await assertSame(rest('', 'v1', 'pods'), 'texts', {});
    await assertSame(rest('', 'v1', 'pods'), '', { labelSelector: 'app=web' });
    await assertSame(rest('apps', 'v1', 'deployments'), 'texts', {});
    await assertSame(rest('', 'v1', 'namespaces'), '', {});
  });

  it('pages: from the cache while nothing changed since the first; a page etcd reads is decoded', async () => {
    const configMaps = rest('', 'v1', 'configmaps');
    let token: string | undefined;
    let first: string | undefined;
    let pages = 0;
    do {
      const opts: ListRequestOptions = { limit: 9, ...(token ? { continue: token } : {}) };
      const body = await assertSame(configMaps, 'texts', opts);
      token = (JSON.parse(body) as { metadata: { continue?: string } }).metadata.continue;
      first ??= token;
      pages++;
    } while (token);
    assert.equal(pages, 6);
    // a change in the rest of the range: etcd reads the next page at the token's revision
    await configMaps.update(ctx('texts'), 'cm-39', (cur) => ({ ...cur!, data: { changed: 'yes' } }), { allowCreate: false });
    await configMaps.list(ctx('texts'), {});
    await assertSame(configMaps, 'texts', { limit: 9, continue: first }, false);
  });

  it('a version other than the storage version is converted, not edited', async () => {
    await rest('autoscaling', 'v2', 'horizontalpodautoscalers').create(ctx('texts'), {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3 },
    });
    await assertSame(rest('autoscaling', 'v1', 'horizontalpodautoscalers'), 'texts', {}, false);
    await assertSame(rest('autoscaling', 'v2', 'horizontalpodautoscalers'), 'texts', {});
  });

  it('objects read by name: the same bytes as decoded and encoded, the odd texts included', async () => {
    const configMaps = rest('', 'v1', 'configmaps');
    const names = (await configMaps.list(ctx('texts'), {})).items.map((o) => o.metadata!.name!);
    assert.ok(names.includes('odd-spaces') && names.includes('cm-00'));
    for (const name of names) {
      // twice: the first read checks the text, the second uses the edits it found
      for (const round of [1, 2]) {
        const decoded = encodeJson(await configMaps.get(ctx('texts'), name, {}));
        const prepared = await configMaps.openGet!(ctx('texts'), name, {});
        assert.equal(encodeJson(prepared.toObject()), decoded, `round ${round}: ${name}`);
        assert.equal(prepared.jsonBody()?.toString(), decoded, `round ${round}: ${name}`);
      }
    }
    await assert.rejects(configMaps.openGet!(ctx('texts'), 'absent', {}), /not found/);
    const pod = await rest('', 'v1', 'pods').openGet!(ctx('texts'), 'pod-1', { resourceVersion: '0' });
    assert.equal(pod.jsonBody()?.toString(), encodeJson(await rest('', 'v1', 'pods').get(ctx('texts'), 'pod-1', {})));
    const hpa = await rest('autoscaling', 'v1', 'horizontalpodautoscalers').openGet!(ctx('texts'), 'web', {});
    assert.equal(hpa.jsonBody(), undefined);
  });

  it('shared reads: frozen objects, the same one per stored version, a new one once the object changed', async () => {
    const namespaces = rest('', 'v1', 'namespaces');
    const first = await namespaces.getShared!(ctx(), 'texts', {});
    assert.ok(first && Object.isFrozen(first) && Object.isFrozen(first.metadata));
    assert.deepEqual(first, await namespaces.get(ctx(), 'texts', {}));
    assert.equal(await namespaces.getShared!(ctx(), 'texts', {}), first);
    assert.equal(await namespaces.getShared!(ctx(), 'absent', {}), null);
    await namespaces.update(ctx(), 'texts', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { shared: 'read' } } }), {
      allowCreate: false,
    });
    // consistent, as get: the change is seen at once
    const after = await namespaces.getShared!(ctx(), 'texts', {});
    assert.notEqual(after, first);
    assert.equal(after?.metadata.labels?.shared, 'read');

    const configMaps = rest('', 'v1', 'configmaps');
    const listed = await configMaps.listShared!(ctx('texts'), {});
    assert.deepEqual(
      listed.map((o) => o.metadata.name),
      (await configMaps.list(ctx('texts'), {})).items.map((o) => o.metadata.name),
    );
    assert.ok(listed.length > 0 && listed.every((o) => Object.isFrozen(o)));
    const again = await configMaps.listShared!(ctx('texts'), {});
    assert.ok(listed.every((o, i) => again[i] === o));
  });
});
