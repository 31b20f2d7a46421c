import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { KubeObject } from '../../storage/interface.js';
import { silentLogger } from '../controllers/types.js';
import type { ResourceResolver, RESTResource } from '../registry/rest.js';
import type { RequestState } from '../request/types.js';
import type { APIServiceView } from './api-services.js';
import { BackendAgents } from './backend-client.js';
import { proxyToAPIService } from './proxy.js';

describe('proxyToAPIService', () => {
  test('a request whose client went away while the endpoint was resolved is not sent to the backend', async () => {
    // a backend that accepts connections and never answers (not even the TLS handshake)
    let connections = 0;
    const sockets = new Set<net.Socket>();
    const backend = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const port = (backend.address() as net.AddressInfo).port;
    const client = new AbortController();
    const service = { metadata: { name: 'metrics' }, spec: { type: 'ExternalName', externalName: '127.0.0.1' } } as KubeObject;
    const services = {
      get: async (): Promise<KubeObject> => {
        // the client disconnects while the service is read
        client.abort();
        return service;
      },
    } as unknown as RESTResource;
    const resolver: ResourceResolver = { lookup: (_g, _v, resource) => (resource === 'services' ? services : undefined), all: () => [] };
    const api: APIServiceView = {
      name: 'v1beta1.metrics.k8s.io',
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      groupPriorityMinimum: 100,
      versionPriority: 100,
      service: { namespace: 'kube-system', name: 'metrics', port },
      insecureSkipTLSVerify: true,
      conditions: [{ type: 'Available', status: 'True' }],
    } as APIServiceView;
    const state = {
      req: { url: '/apis/metrics.k8s.io/v1beta1/pods', headers: {} },
      method: 'GET',
      path: '/apis/metrics.k8s.io/v1beta1/pods',
      query: new URLSearchParams(),
      user: { username: 'alice', groups: ['system:authenticated'] },
      warnings: [],
      signal: client.signal,
    } as unknown as RequestState;
    try {
      const outcome = await Promise.race([
        proxyToAPIService(state, api, { resolver, agents: new BackendAgents(undefined), log: silentLogger }).then(() => 'returned'),
        new Promise<string>((resolve) => setTimeout(() => resolve('still proxying'), 1_000).unref()),
      ]);
      assert.equal(outcome, 'returned');
      assert.equal(connections, 0, 'no connection was made to the backend');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => backend.close(() => resolve()));
    }
  });
});
