// --authorization-mode=ABAC with a policy file, kubectl 1.33 as token users: a read-only
// v1beta1 policy (alice), a namespace- and resource-bound one (bob), an unversioned v0 line
// (carol: everything), a `*` group policy for a non-resource path prefix; kube's 403 text with
// "No policy matched."; `auth can-i --list` from the policies; a broken policy file stops
// start-up with kube's message.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, startKapi, writeKubeconfig, type KapiProcess } from './harness.js';

const POLICIES = [
  '# read-only everywhere',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*", "readonly": true}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "bob", "namespace": "team", "resource": "configmaps", "apiGroup": ""}}',
  '',
  '{"user": "carol"}',
  '# discovery for every authenticated user, as kube documents for kubectl',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "nonResourcePath": "/api*", "readonly": true}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "*", "nonResourcePath": "/version*", "readonly": true}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "namespace": "*", "apiGroup": "authorization.k8s.io", "resource": "selfsubjectrulesreviews"}}',
].join('\n');

let kapi: KapiProcess;
let dir: string;
const as = (user: string) => ({ kubeconfig: path.join(dir, `${user}.kubeconfig`) });

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-abac-'));
  writeFileSync(path.join(dir, 'policy.jsonl'), POLICIES);
  writeFileSync(path.join(dir, 'tokens.csv'), ['alice', 'bob', 'carol', 'dave'].map((u) => `tok-${u},${u},${u}-uid`).join('\n') + '\n');
  kapi = await startKapi({
    extraArgs: [
      '--authorization-mode=ABAC',
      '--authorization-policy-file',
      path.join(dir, 'policy.jsonl'),
      '--token-auth-file',
      path.join(dir, 'tokens.csv'),
    ],
  });
  for (const u of ['alice', 'bob', 'carol', 'dave'])
    writeKubeconfig(path.join(dir, `${u}.kubeconfig`), kapi.kubeconfig, { token: `tok-${u}` });
  await kubectlOk(['create', 'namespace', 'team'], { kubeconfig: kapi.kubeconfig });
});

after(async () => {
  await kapi?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a read-only policy reads everything and writes nothing', async () => {
  assert.equal((await kubectl(['get', 'pods', '-A'], as('alice'))).code, 0);
  assert.equal((await kubectl(['get', 'clusterroles'], as('alice'))).code, 0);
  const write = await kubectl(['create', 'configmap', 'x', '-n', 'team'], as('alice'));
  assert.notEqual(write.code, 0);
  assert.match(
    write.stderr,
    /configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team": No policy matched\./,
  );
});

test('a namespace- and resource-bound policy; a v0 line allows everything; strangers nothing', async () => {
  await kubectlOk(['create', 'configmap', 'b', '-n', 'team', '--from-literal=a=b'], as('bob'));
  assert.equal((await kubectl(['get', 'configmaps', '-n', 'default'], as('bob'))).code, 1);
  assert.equal((await kubectl(['get', 'secrets', '-n', 'team'], as('bob'))).code, 1);
  await kubectlOk(['create', 'namespace', 'carols'], as('carol'));
  await kubectlOk(['get', '--raw', '/healthz'], as('carol'));
  const dave = await kubectl(['get', 'pods'], as('dave'));
  assert.match(dave.stderr, /User "dave" cannot list resource "pods" in API group "" in the namespace "default"/);
  // the `*` group policy: every authenticated user, the /version* paths, reads only
  assert.match(await kubectlOk(['get', '--raw', '/version'], as('dave')), /"gitVersion"/);
  assert.notEqual((await kubectl(['get', '--raw', '/metrics'], as('dave'))).code, 0);
});

test('auth can-i --list shows the rules of the matching policies', async () => {
  const bob = await kubectlOk(['auth', 'can-i', '--list', '-n', 'team'], as('bob'));
  assert.match(bob, /^configmaps\s+\[\]\s+\[\]\s+\[\*\]$/m);
  assert.match(bob, /^selfsubjectrulesreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[\*\]$/m);
  assert.doesNotMatch(bob, /^secrets/m);
  const alice = await kubectlOk(['auth', 'can-i', '--list', '-n', 'team'], as('alice'));
  assert.match(alice, /^\*\.\*\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  // kube lists a policy only when its namespace is * or the one asked about: the
  // non-resource policies (no namespace) are not listed
  assert.doesNotMatch(alice, /\/version/);
});

test("a policy file that does not parse stops start-up with kube's message", async () => {
  const bad = path.join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"user": "x"}\n{not json\n');
  await assert.rejects(
    startKapi({ extraArgs: ['--authorization-mode=ABAC', `--authorization-policy-file=${bad}`], readyTimeoutMs: 60_000 }),
    /error reading policy file .*bad\.jsonl, line 2: \{not json: /,
  );
});
