// Older kubectl releases (1.27 ... 1.32) against kapi: a smoke test each. They speak older
// discovery forms (apidiscovery v2beta1 or the unaggregated documents) and older OpenAPI
// paths, so the same commands exercise different server code.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fixturePath, kubectl, olderKubectlVersions, startKapi, type KapiProcess } from './harness.js';

describe('older kubectl versions', () => {
  let kapi: KapiProcess;
  before(async () => {
    kapi = await startKapi();
  });
  after(async () => {
    await kapi?.stop();
  });

  for (const version of olderKubectlVersions) {
    describe(`kubectl ${version}`, () => {
      const opts = () => ({ kubeconfig: kapi.kubeconfig, version });
      const name = `from-kubectl-${version.replace('.', '-')}`;
      const run = async (args: string[]) => {
        const r = await kubectl(args, opts());
        assert.equal(r.code, 0, `kubectl ${version} ${args.join(' ')}\n${r.stderr}`);
        return r.stdout;
      };

      it('get ns', async () => {
        const out = await run(['get', 'ns']);
        assert.match(out, /^NAME\s+STATUS\s+AGE\n/);
        for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
          assert.match(out, new RegExp(`^${ns}\\s+Active\\s`, 'm'));
        }
      });

      it('create, get and delete a configmap', async () => {
        assert.equal(await run(['create', 'configmap', name, '--from-literal=v=' + version]), `configmap/${name} created\n`);
        assert.equal(await run(['get', 'configmap', name, '-o', 'jsonpath={.data.v}']), version);
        assert.match(await run(['get', 'configmap', name]), new RegExp(`^${name}\\s+1\\s+\\S+$`, 'm'));
        assert.equal(await run(['delete', 'configmap', name]), `configmap "${name}" deleted\n`);
        const gone = await kubectl(['get', 'configmap', name], opts());
        assert.equal(gone.code, 1);
        assert.equal(gone.stderr, `Error from server (NotFound): configmaps "${name}" not found\n`);
      });

      it('api-resources shows the 1.33 built-in API', async () => {
        const out = await run(['api-resources']);
        assert.equal(out, readFileSync(fixturePath('api-resources-1.33.txt'), 'utf8'));
      });

      it('create -f refuses an unknown field (kubectl --validate=strict)', async () => {
        const manifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: dep-${version.replace('.', '-')}
spec:
  selector:
    matchLabels: {app: x}
  template:
    metadata:
      labels: {app: x}
    spec:
      containers:
      - name: c
        image: nginx
`;
        const r = await kubectl(['create', '-f', '-'], { ...opts(), input: manifest });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, `deployment.apps/dep-${version.replace('.', '-')} created\n`);
        const badManifest = manifest
          .replace(`name: dep-${version.replace('.', '-')}`, `name: bad-${version.replace('.', '-')}`)
          .replace('image: nginx', 'image: nginx\n        imagePolicy: Always');
        const bad = await kubectl(['create', '-f', '-'], { ...opts(), input: badManifest });
        assert.notEqual(bad.code, 0, 'an unknown field is refused (strict field validation)');
        assert.match(bad.stderr, /imagePolicy/);
      });
    });
  }
});
