// What every in-process controller shares. Controllers act on the cluster only through the
// registry's RESTResources (as an in-process client: no HTTP, no authorization) and, for
// coordination among replicas, through etcd directly.

import type { EtcdClient } from '../../storage/etcd/types.js';
import { createLogger, type Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';

export type { Logger } from '../log.js';

export interface ControllerDeps {
  resolver: ResourceResolver;
  etcd: EtcdClient;
  /** the etcd key prefix (`--etcd-prefix`, e.g. `/registry`); every key kapi writes lives under it */
  prefix: string;
  /** `--service-cluster-ip-range`, e.g. `10.0.0.0/24` or `10.0.0.0/24,fd00::/108` */
  serviceClusterIPRange: string;
  /** the address other replicas and in-cluster clients reach this replica at */
  advertiseAddress: string;
  securePort: number;
  /** unique per replica process (two processes must never share one: it names the leader) */
  identity: string;
  /** which worker process of the replica this is (--workers), 0 when it has one */
  workerIndex?: number;
  log?: Logger;
}

/** A long-running loop. `start` resolves once the loop has stopped after `signal` aborts. */
export interface Controller {
  readonly name: string;
  start(signal: AbortSignal): Promise<void>;
}

export const defaultLogger: Logger = createLogger('controllers');

/** for tests: a logger that prints nothing */
export const silentLogger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  v: () => silentLogger,
  named: () => silentLogger,
};

/** the prefix without a trailing slash, so `${prefix}/x` never doubles it */
export function normalizePrefix(prefix: string): string {
  return prefix.replace(/\/+$/, '');
}
