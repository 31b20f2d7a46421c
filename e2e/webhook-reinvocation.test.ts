// Mutating webhook reinvocation on a kapi process, with kubectl 1.33 and a loopback HTTPS
// webhook server (own CA): webhook "first" records the label that webhook "second" adds;
// "second" runs after it. With reinvocationPolicy IfNeeded, second's change makes kapi call
// first again, so first sees the label and the object keeps what the second call wrote; with
// Never, first runs once and never sees it.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlOk, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';
import { startLoopbackHttps, type LoopbackHttps } from './loopback-https.js';

interface Review {
  request: { uid: string; name?: string; object: { metadata: { name: string; labels?: Record<string, string> } } };
}

describe('mutating webhook reinvocation', () => {
  let kapi: KapiProcess;
  let hooks: LoopbackHttps;
  /** every call: which webhook path, for which object, and what "first" found */
  const calls: { path: string; name: string; sawSecond: string }[] = [];
  const ns = uniqueName('reinvoke');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });

  function answer(path: string, body: unknown): unknown {
    const { request } = body as Review;
    const labels = request.object.metadata.labels ?? {};
    const sawSecond = labels.second ?? 'absent';
    calls.push({ path, name: request.object.metadata.name, sawSecond });
    const patch =
      path === '/first'
        ? [{ op: 'add', path: '/metadata/labels/first-saw-second', value: sawSecond }]
        : [{ op: 'add', path: '/metadata/labels/second', value: 'added' }];
    return {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') },
    };
  }

  /** a configuration whose two webhooks (first, then second) see ConfigMaps labelled policy=<policy> */
  function configuration(policy: 'IfNeeded' | 'Never'): string {
    const hook = (name: string, path: string, reinvocationPolicy: string) => ({
      name: `${name}.${policy.toLowerCase()}.reinvoke.example.com`,
      clientConfig: { url: `${hooks.url}${path}`, caBundle: hooks.caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      objectSelector: { matchLabels: { policy } },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      reinvocationPolicy,
    });
    return JSON.stringify({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: `reinvoke-${policy.toLowerCase()}` },
      webhooks: [hook('first', '/first', policy), hook('second', '/second', 'Never')],
    });
  }

  const configMap = (name: string, policy: string) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { policy } }, data: { a: 'b' } });

  async function labelsOf(name: string): Promise<Record<string, string>> {
    return JSON.parse(await kubectlOk(['get', 'configmap', name, '-n', ns, '-o', 'jsonpath={.metadata.labels}'], admin())) as Record<
      string,
      string
    >;
  }

  before(async () => {
    hooks = await startLoopbackHttps(answer);
    kapi = await startKapi();
    await kubectlOk(['create', 'namespace', ns], admin());
    for (const policy of ['IfNeeded', 'Never'] as const) {
      await kubectlOk(['apply', '-f', '-'], { ...admin(), input: configuration(policy) });
      // the configurations reach the admission plugin by a watch: wait until one mutates
      let i = 0;
      await waitFor(`the ${policy} configuration in effect`, async () => {
        const probe = `probe-${policy.toLowerCase()}-${++i}`;
        await kubectlOk(['create', '-f', '-'], { ...admin(), input: configMap(probe, policy) });
        return (await labelsOf(probe)).second === 'added';
      });
    }
  });
  after(async () => {
    await kapi?.stop();
    await hooks?.close();
  });

  it('IfNeeded: a later webhook changes the object, so the first runs again and sees the change', async () => {
    await kubectlOk(['create', '-f', '-'], { ...admin(), input: configMap('reinvoked', 'IfNeeded') });
    assert.deepEqual(
      calls.filter((c) => c.name === 'reinvoked'),
      [
        { path: '/first', name: 'reinvoked', sawSecond: 'absent' },
        { path: '/second', name: 'reinvoked', sawSecond: 'absent' },
        { path: '/first', name: 'reinvoked', sawSecond: 'added' },
      ],
    );
    assert.deepEqual(await labelsOf('reinvoked'), { policy: 'IfNeeded', second: 'added', 'first-saw-second': 'added' });
  });

  it('Never: the first webhook runs once', async () => {
    await kubectlOk(['create', '-f', '-'], { ...admin(), input: configMap('once', 'Never') });
    assert.deepEqual(
      calls.filter((c) => c.name === 'once'),
      [
        { path: '/first', name: 'once', sawSecond: 'absent' },
        { path: '/second', name: 'once', sawSecond: 'absent' },
      ],
    );
    assert.deepEqual(await labelsOf('once'), { policy: 'Never', second: 'added', 'first-saw-second': 'absent' });
  });
});
