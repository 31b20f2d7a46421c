// What kapi's handler chain costs per request, without storage: the chain the server builds
// (bearer token of a system:masters user, priority and fairness, request and auth metrics,
// no audit) around a stub API handler that answers a small ConfigMap, served by node's HTTP
// server and driven by a keep-alive client in the same process, 64 requests at a time.
// Prints the process's CPU microseconds per request; `--bare` serves the stub without the
// chain, so the difference of the two is what the filters cost.
//
// Usage: node dist/bench/chain.js [--requests N] [--bare]

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildHandlerChain, toRequestListener } from '../server/http/chain.js';
import { FlowController } from '../server/flowcontrol/controller.js';
import { unionAuthenticator, withAuthenticatedGroup } from '../server/authn/authenticator.js';
import { createBearerAuthenticator } from '../server/authn/bearer.js';
import type { Authorizer } from '../server/authz/authorizer.js';
import type { Handler } from '../server/request/types.js';

const CONCURRENCY = 64;
const WARM_UP = 3000;
const TOKEN = 'chain-bench';

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const requests = Number(option('--requests') ?? 20000);
  const bare = process.argv.includes('--bare');
  const admin = { user: { username: 'admin', uid: '1', groups: ['system:masters'] }, audiences: [] };
  const authenticator = withAuthenticatedGroup(
    unionAuthenticator([
      createBearerAuthenticator(
        async (t) => (t === TOKEN ? admin : null),
        () => [],
      ),
    ]),
  );
  const authorizer: Authorizer = {
    authorize: async (a) => (a.user.groups.includes('system:masters') ? { decision: 'allow' } : { decision: 'noOpinion' }),
  };
  const body = JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'default' }, data: { k: 'v' } });
  const api: Handler = async (state) => {
    state.res.setHeader('Content-Type', 'application/json');
    state.res.setHeader('Content-Length', Buffer.byteLength(body));
    state.res.end(body);
  };
  const chain = buildHandlerChain(api, {
    authenticator,
    authorizer,
    maxInFlight: { kind: 'priority-and-fairness', controller: new FlowController({ serverConcurrencyLimit: 600 }) },
    deprecationOf: () => undefined,
  });
  const server = http.createServer(toRequestListener(bare ? api : chain));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const headers = { authorization: `Bearer ${TOKEN}`, accept: 'application/json' };
      const req = http.request({ host: '127.0.0.1', port, path: '/api/v1/namespaces/default/configmaps/a', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end();
    });
  const run = async (n: number) => {
    let started = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (started++ < n) await one();
      }),
    );
  };
  await run(WARM_UP);
  const before = process.cpuUsage();
  await run(requests);
  const used = process.cpuUsage(before);
  console.log(
    `${bare ? 'stub without the chain' : 'handler chain'}: ${((used.user + used.system) / requests).toFixed(1)} µs CPU per request (${requests} requests, client included)`,
  );
  agent.destroy();
  server.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
