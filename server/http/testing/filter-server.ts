// A real TLS server (HTTP/2 and HTTP/1.1) around a handful of filters and a handler, for the
// serving filters' tests: request info is parsed first, as in the full chain.

import { toRequestListener } from '../chain.js';
import { withRequestInfo } from '../filters/request-info.js';
import { createSecureServer, type SecureServer, type SecureServerOptions } from '../server.js';
import type { Filter, Handler } from '../../request/types.js';
import { createTestPKI, type TestPKI } from '../../pki/testing.js';
import { TestClient } from './client.js';

export interface FilterServer {
  client: TestClient;
  server: SecureServer;
  close(): Promise<void>;
}

let shared: TestPKI | undefined;
let users = 0;

export async function serveFilters(
  filters: Filter[],
  api: Handler,
  extra: Partial<Omit<SecureServerOptions, 'handler' | 'cert' | 'key'>> = {},
): Promise<FilterServer> {
  shared ??= createTestPKI();
  users++;
  const pki = shared;
  const chain = [withRequestInfo(), ...filters].reduceRight<Handler>((next, f) => f(next), api);
  const server = createSecureServer({ cert: pki.server.cert, key: pki.server.key, handler: toRequestListener(chain), ...extra });
  const address = await server.listen(0, '127.0.0.1');
  return {
    client: new TestClient(address.port, pki.ca.cert),
    server,
    async close() {
      await server.close(0);
      if (--users === 0) {
        pki.cleanup();
        shared = undefined;
      }
    },
  };
}
