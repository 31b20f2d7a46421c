// WebhookAdmissionConfiguration: users of its kubeconfig by exact host[:port], `*.` wildcard
// and `*`; a bearer token reaches the webhook in the Authorization header.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentialResolverFrom } from './credentials.js';
import { postReview, resolveTarget } from './client.js';

test('users by host:port, host, wildcard and *; tokens from a file relative to the kubeconfig', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-creds-'));
  try {
    writeFileSync(path.join(dir, 'token'), 'file-token\n');
    const kubeconfig = path.join(dir, 'kubeconfig.yaml');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'users:',
        '- name: hooks.example.com:8443',
        '  user: {token: exact-token}',
        '- name: "*.ns.svc"',
        '  user: {tokenFile: token}',
        '- name: "*"',
        '  user: {username: u, password: p}',
      ].join('\n'),
    );
    const creds = credentialResolverFrom({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'WebhookAdmissionConfiguration',
      kubeConfigFile: kubeconfig,
    });
    assert.equal(creds('hooks.example.com:8443', 'hooks.example.com')?.authorization, 'Bearer exact-token');
    assert.equal(creds('hook.ns.svc:443', 'hook.ns.svc')?.authorization, 'Bearer file-token');
    assert.equal(creds('other.example.com', 'other.example.com')?.authorization, `Basic ${Buffer.from('u:p').toString('base64')}`);
    assert.throws(
      () => credentialResolverFrom({ kind: 'WebhookAdmissionConfiguration', kubeConfigFile: 'relative.yaml' }),
      /kubeConfigFile "relative.yaml" must be an absolute file path/,
    );
    assert.equal(credentialResolverFrom(undefined)('x', 'x'), undefined);

    // the header reaches the webhook
    let seen = '';
    const server = http.createServer((req, res) => {
      seen = req.headers.authorization ?? '';
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const only = credentialResolverFrom({ kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig });
      const target = await resolveTarget('w', { url: `http://127.0.0.1:${port}/x` }, { lookup: () => undefined, all: () => [] }, only);
      await postReview('w', target, {}, 5000);
      assert.equal(seen, `Basic ${Buffer.from('u:p').toString('base64')}`);
    } finally {
      server.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
