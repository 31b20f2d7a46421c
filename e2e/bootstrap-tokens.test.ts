// The bootstrap-token controllers with kubectl 1.33: an expired token Secret is deleted, one
// that expires later is deleted once it has; `cluster-info` in kube-public gets a detached
// HS256 JWS of its kubeconfig per signing token (checked here with node's HMAC), and loses it
// when the token goes.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { kubectl, kubectlOk, startKapi, waitFor, type KapiProcess } from './harness.js';

let kapi: KapiProcess;

before(async () => {
  kapi = await startKapi();
});

after(async () => {
  await kapi?.stop();
});

function tokenSecret(id: string, secret: string, extra: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    stringData: { 'token-id': id, 'token-secret': secret, ...extra },
  });
}

const exists = async (args: string[]): Promise<boolean> => (await kubectl(['get', ...args], { kubeconfig: kapi.kubeconfig })).code === 0;

test('the token cleaner deletes expired bootstrap tokens, and later ones when they expire', async () => {
  const opts = { kubeconfig: kapi.kubeconfig };
  await kubectlOk(['create', '-f', '-'], {
    ...opts,
    input: tokenSecret('aaaaaa', 'aaaaaaaaaaaaaaaa', { expiration: '2020-01-01T00:00:00Z' }),
  });
  await kubectlOk(['create', '-f', '-'], {
    ...opts,
    input: tokenSecret('bbbbbb', 'bbbbbbbbbbbbbbbb', { expiration: new Date(Date.now() + 3000).toISOString().replace(/\.\d+Z$/, 'Z') }),
  });
  await kubectlOk(['create', '-f', '-'], {
    ...opts,
    input: tokenSecret('cccccc', 'cccccccccccccccc', { expiration: '2999-01-01T00:00:00Z' }),
  });
  await waitFor(
    'the expired token deleted',
    async () => !(await exists(['secret', 'bootstrap-token-aaaaaa', '-n', 'kube-system'])),
    30_000,
  );
  await waitFor('the later token deleted', async () => !(await exists(['secret', 'bootstrap-token-bbbbbb', '-n', 'kube-system'])), 30_000);
  assert.ok(await exists(['secret', 'bootstrap-token-cccccc', '-n', 'kube-system']));
});

function expectedSignature(content: string, id: string, secret: string): string {
  const header = Buffer.from(`{"alg":"HS256","kid":"${id}"}`).toString('base64url');
  const mac = createHmac('sha256', secret)
    .update(`${header}.${Buffer.from(content).toString('base64url')}`)
    .digest('base64url');
  return `${header}..${mac}`;
}

test('the bootstrap signer signs cluster-info for signing tokens only, and unsigns when a token goes', async () => {
  const opts = { kubeconfig: kapi.kubeconfig };
  const kubeconfig = 'apiVersion: v1\nkind: Config\nclusters:\n- name: ""\n  cluster:\n    server: https://127.0.0.1:6443\n';
  await kubectlOk(['create', 'configmap', 'cluster-info', '-n', 'kube-public', `--from-literal=kubeconfig=${kubeconfig}`], opts);
  await kubectlOk(['create', '-f', '-'], {
    ...opts,
    input: tokenSecret('signer', 'ssssssssssssssss', { 'usage-bootstrap-signing': 'true' }),
  });
  await kubectlOk(['create', '-f', '-'], {
    ...opts,
    input: tokenSecret('nosign', 'nnnnnnnnnnnnnnnn', { 'usage-bootstrap-authentication': 'true' }),
  });
  const data = async () =>
    (
      JSON.parse(await kubectlOk(['get', 'configmap', 'cluster-info', '-n', 'kube-public', '-o', 'json'], opts)) as {
        data: Record<string, string>;
      }
    ).data;
  const signed = await waitFor('cluster-info signed', async () => ((await data())['jws-kubeconfig-signer'] ? data() : undefined), 30_000);
  assert.equal(signed['jws-kubeconfig-signer'], expectedSignature(kubeconfig, 'signer', 'ssssssssssssssss'));
  assert.equal(signed['jws-kubeconfig-nosign'], undefined);
  assert.equal(signed.kubeconfig, kubeconfig);

  await kubectlOk(['delete', 'secret', 'bootstrap-token-signer', '-n', 'kube-system'], opts);
  await waitFor('the signature removed', async () => (await data())['jws-kubeconfig-signer'] === undefined, 30_000);
});
