// The replica's budget for large request bodies (--max-inflight-body-mib), against a real kapi
// with a 1 MiB budget, kubectl 1.33 and a plain HTTPS client, and a loopback validating webhook
// that holds the creates it is asked about until the test lets them go, so which bodies are
// being acted on is known exactly: a second large body (kubectl's) waits while the first is
// held (the webhook never hears of it), small bodies pass by, a request whose client leaves
// while waiting is never acted on, and once the first is answered the waiting one goes on.
// Afterwards a body near the whole budget is taken, so nothing was left held.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, kubectl, startKapi, waitFor, type KapiProcess } from './harness.js';
import { startLoopbackHttps } from './loopback-https.js';

interface HoldingWebhook {
  port: number;
  caBundle: string;
  /** names of the objects it was asked about, in order */
  seen: string[];
  /** answers (allows) the held review of this object */
  release(name: string): void;
  close(): Promise<void>;
}

/** allows objects named probe-* and small-* at once; holds every other until released */
async function startHoldingWebhook(): Promise<HoldingWebhook> {
  const seen: string[] = [];
  const held = new Map<string, () => void>();
  const released = new Set<string>();
  const server = await startLoopbackHttps((_path, body) => {
    const { uid, name } = (body as { request: { uid: string; name: string } }).request;
    seen.push(name);
    const allowed = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } };
    if (name.startsWith('probe-') || name.startsWith('small-') || released.has(name)) return allowed;
    return new Promise((resolve) => held.set(name, () => resolve(allowed)));
  });
  return {
    port: server.port,
    caBundle: server.caBundle,
    seen,
    release(name) {
      released.add(name);
      held.get(name)?.();
      held.delete(name);
    },
    close: () => server.close(),
  };
}

const configMap = (name: string, dataBytes: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels: { 'body-budget': 'held' } },
  data: { payload: 'x'.repeat(dataBytes) },
});

describe('large request bodies share a budget and wait their turn', () => {
  let kapi: KapiProcess;
  let webhook: HoldingWebhook;
  const ns = 'body-budget';
  const base = `/api/v1/namespaces/${ns}/configmaps`;

  before(async () => {
    webhook = await startHoldingWebhook();
    kapi = await startKapi({ extraArgs: ['--max-inflight-body-mib', '1'] });
    await createNamespace(kapi.http, ns);
    const created = await kapi.http.post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'body-budget-holder' },
      webhooks: [
        {
          name: 'holder.body-budget.test',
          clientConfig: { url: `https://127.0.0.1:${webhook.port}/hold`, caBundle: webhook.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          objectSelector: { matchLabels: { 'body-budget': 'held' } },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          timeoutSeconds: 30,
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    assert.equal(created.status, 201, created.body);
    let probe = 0;
    await waitFor('the webhook to be called', async () => {
      const name = `probe-${probe++}`;
      const res = await kapi.http.post(base, configMap(name, 10));
      assert.equal(res.status, 201, res.body);
      return webhook.seen.includes(name);
    });
  });
  after(async () => {
    await kapi?.stop();
    await webhook?.close();
  });

  it('a second large body waits while the first is acted on; small ones pass; one whose client left is never acted on', async () => {
    const first = kapi.http.post(base, configMap('large-first', 700_000));
    await waitFor('the first large create at the webhook', () => webhook.seen.includes('large-first'));

    // kubectl 1.33 (over HTTP/2) sends the second: it waits, then is answered as usual
    const second = kubectl(['create', '-n', ns, '-f', '-'], {
      kubeconfig: kapi.kubeconfig,
      input: JSON.stringify(configMap('large-second', 700_000)),
    });
    // its client gives up while it waits
    const abandoned = kapi.http.post(base, configMap('large-abandoned', 700_000), { timeoutMs: 1500 });
    const small = await kapi.http.post(base, configMap('small-one', 1000));
    assert.equal(small.status, 201, small.body);
    await assert.rejects(abandoned, /no answer in time/);
    assert.ok(
      !webhook.seen.includes('large-second'),
      `the second large body was acted on while the first held the budget: ${webhook.seen}`,
    );
    assert.ok(!webhook.seen.includes('large-abandoned'));

    webhook.release('large-first');
    assert.equal((await first).status, 201);
    await waitFor('the second large create at the webhook', () => webhook.seen.includes('large-second'));
    webhook.release('large-second');
    const done = await second;
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /configmap\/large-second created/);

    assert.ok(!webhook.seen.includes('large-abandoned'), 'the request whose client left was acted on');
    assert.equal((await kapi.http.get(`${base}/large-abandoned`)).status, 404);
  });

  it('nothing stays held: a body of nearly the whole budget is taken and answered', async () => {
    webhook.release('large-last');
    const res = await kapi.http.post(base, configMap('large-last', 1_000_000));
    assert.equal(res.status, 201, res.body);
    assert.ok(webhook.seen.includes('large-last'));
  });
});
