// The authenticating proxy (--requestheader-*) of a kapi process, over raw HTTPS as a front
// proxy speaks to it: a client certificate from the front-proxy CA (made here) with an
// allowed common name names the user, uid, groups and extra in X-Remote-* headers, and
// authorization judges that user. The same headers are ignored from an ordinary client
// certificate and refused (401) from a certificate whose name is not allowed or whose CA is
// another.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCA, generateKey, issueCert, type Signer } from '../server/pki/x509.js';
import { KubeHttpClient, jsonOf, kubectlOk, loadKubeconfig, startKapi, uniqueName, type KapiProcess } from './harness.js';

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

const proxyHeaders = {
  'X-Remote-User': 'alice',
  'X-Remote-Uid': 'alice-uid-42',
  'X-Remote-Extra-Scopes': 'read',
  'X-Remote-Extra-Acme.com%2Fproject': 'apollo',
};

describe('authenticating proxy: --requestheader-*', () => {
  let dir: string;
  let kapi: KapiProcess;
  const clients: KubeHttpClient[] = [];
  let proxy: KubeHttpClient;
  let wrongName: KubeHttpClient;
  let otherCA: KubeHttpClient;
  const ns = uniqueName('front-proxy');

  /** an HTTPS client to kapi with a client certificate that `ca` signs for `commonName` */
  async function clientWith(ca: Signer, commonName: string): Promise<KubeHttpClient> {
    const key = await generateKey('ecdsa');
    const cert = await issueCert(ca, { commonName, usage: 'client', validDays: 1 }, key);
    const admin = loadKubeconfig(kapi.kubeconfig);
    const client = new KubeHttpClient({ server: kapi.url, ca: admin.ca, cert: Buffer.from(cert), key: Buffer.from(key.privateKeyPem) });
    clients.push(client);
    return client;
  }

  /** who kapi takes the request for (a SelfSubjectReview), or the HTTP status when it refuses */
  async function whoami(client: KubeHttpClient, headers: Record<string, string | string[]>): Promise<UserInfo | number> {
    const res = await client.post(
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { headers },
    );
    if (res.status !== 201) return res.status;
    return jsonOf<{ status: { userInfo: UserInfo } }>(res).status.userInfo;
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-front-proxy-'));
    const frontProxyCA = await createCA('front-proxy-ca', 1, await generateKey('ecdsa'));
    const caFile = path.join(dir, 'front-proxy-ca.crt');
    writeFileSync(caFile, frontProxyCA.certPem);
    kapi = await startKapi({
      extraArgs: [
        '--authorization-mode',
        'RBAC',
        '--requestheader-client-ca-file',
        caFile,
        '--requestheader-allowed-names',
        'front-proxy-client,aggregator',
        '--requestheader-username-headers',
        'X-Remote-User',
        '--requestheader-uid-headers',
        'X-Remote-Uid',
        '--requestheader-group-headers',
        'X-Remote-Group',
        '--requestheader-extra-headers-prefix',
        'X-Remote-Extra-',
      ],
    });
    proxy = await clientWith(frontProxyCA, 'front-proxy-client');
    wrongName = await clientWith(frontProxyCA, 'somebody-else');
    const anotherCA = await createCA('front-proxy-ca', 1, await generateKey('ecdsa'));
    otherCA = await clientWith(anotherCA, 'front-proxy-client');
    await kubectlOk(['create', 'namespace', ns], { kubeconfig: kapi.kubeconfig });
  });
  after(async () => {
    for (const c of clients) c.close();
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('takes user, uid, groups and extra from the headers of an allowed front-proxy certificate', async () => {
    const user = await whoami(proxy, { ...proxyHeaders, 'X-Remote-Group': ['developers', 'qa'] });
    assert.deepEqual(user, {
      username: 'alice',
      uid: 'alice-uid-42',
      groups: ['developers', 'qa', 'system:authenticated'],
      extra: { scopes: ['read'], 'acme.com/project': ['apollo'] },
    });
  });

  it('authorizes the user the headers name, not the proxy', async () => {
    const list = `/api/v1/namespaces/${ns}/configmaps`;
    const denied = await proxy.get(list, { headers: { 'X-Remote-User': 'alice', 'X-Remote-Group': 'developers' } });
    assert.equal(denied.status, 403);
    assert.match(
      jsonOf<{ message: string }>(denied).message,
      /^configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "/,
    );
    await kubectlOk(['create', 'rolebinding', 'developers-view', '-n', ns, '--clusterrole=view', '--group=developers'], {
      kubeconfig: kapi.kubeconfig,
    });
    // RBAC's cache follows the binding by a watch: wait until the group is allowed
    let allowed = denied;
    for (let i = 0; i < 100 && allowed.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      allowed = await proxy.get(list, { headers: { 'X-Remote-User': 'alice', 'X-Remote-Group': 'developers' } });
    }
    assert.equal(allowed.status, 200, allowed.body);
    const otherGroup = await proxy.get(list, { headers: { 'X-Remote-User': 'alice', 'X-Remote-Group': 'qa' } });
    assert.equal(otherGroup.status, 403);
  });

  it('ignores the headers from an ordinary client certificate', async () => {
    const user = await whoami(kapi.http, proxyHeaders);
    assert.equal(typeof user, 'object');
    assert.equal((user as UserInfo).username, 'kubernetes-admin');
    assert.equal((user as UserInfo).extra, undefined);
  });

  it('refuses a front-proxy certificate whose common name is not allowed (401)', async () => {
    assert.equal(await whoami(wrongName, proxyHeaders), 401);
  });

  it('refuses a certificate from another CA with an allowed common name (401)', async () => {
    assert.equal(await whoami(otherCA, proxyHeaders), 401);
  });
});
