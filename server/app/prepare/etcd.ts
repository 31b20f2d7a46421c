// etcd: the embedded member when no --etcd-servers are given, the client, and the wait until
// etcd answers (an external cluster may still be electing a leader).

import { startEmbeddedEtcd } from '../../etcd-embedded/embedded.js';
import { createEtcdClient } from '../../../storage/etcd/client.js';
import type { EtcdClient } from '../../../storage/etcd/types.js';
import { createLogger } from '../../log.js';
import type { StorageOptions } from '../options/storage.js';
import { sleep, type StopStack } from '../lifecycle.js';

const log = createLogger('kapi');

const ETCD_START_TIMEOUT_MS = 60_000;

export interface ConnectedEtcd {
  client: EtcdClient;
  /** the embedded member's endpoint, or --etcd-servers */
  endpoints: string[];
}

async function waitForEtcd(client: EtcdClient, endpoints: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    try {
      const status = await client.status();
      log.info('connected to etcd', { endpoints: endpoints.join(','), version: status.version, revision: status.header.revision });
      return;
    } catch (err) {
      lastError = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`etcd at ${endpoints.join(',')} did not answer within ${timeoutMs / 1000}s: ${lastError}`);
    await sleep(250);
  }
}

/** `primaryEtcd`: a worker's primary runs the embedded member; the worker only connects to it.
 *  `servingPort`: the replica's secure port, which an embedded member must leave free. */
export async function connectEtcd(
  options: StorageOptions,
  stack: StopStack,
  servingPort: number,
  primaryEtcd?: string[],
): Promise<ConnectedEtcd> {
  let endpoints = options.etcd.servers;
  if (endpoints.length === 0 && primaryEtcd) {
    endpoints = primaryEtcd;
  } else if (endpoints.length === 0) {
    const embedded = await startEmbeddedEtcd({ dataDir: options.dataDir, avoidPorts: [servingPort] });
    stack.push('embedded etcd', () => embedded.stop());
    endpoints = [embedded.endpoint];
  }
  const client = createEtcdClient({
    endpoints,
    caFile: options.etcd.caFile || undefined,
    certFile: options.etcd.certFile || undefined,
    keyFile: options.etcd.keyFile || undefined,
  });
  stack.push('etcd client', () => client.close());
  await waitForEtcd(client, endpoints, ETCD_START_TIMEOUT_MS);
  return { client, endpoints };
}
