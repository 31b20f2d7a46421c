// Phase 3, run: listen, become ready, and hand back the App whose shutdown takes it all
// apart. Shutdown (SIGTERM): /readyz starts failing, --shutdown-delay-duration passes (load
// balancers notice; the API keeps serving), the listener closes and watches end cleanly,
// requests in flight are answered, then everything else stops in reverse start order.

import path from 'node:path';
import type { KapiConfig } from '../config/flags.js';
import { createSecureServer, type SecureServer } from '../http/server.js';
import type { Pki } from '../pki/pki.js';
import { missingKapiNodeFlags } from '../cli/node-flags.js';
import { createLogger } from '../log.js';
import type { Built } from './build.js';
import type { CompletedConfig } from './config.js';
import { sleep, type StopStack } from './lifecycle.js';
import { hostPort, type ServingOptions } from './options/serving.js';
import type { Prepared } from './prepare.js';
import type { ServingState } from './serving-state.js';

const log = createLogger('kapi');

export interface App {
  readonly config: KapiConfig;
  readonly pki: Pki;
  /** the etcd endpoints in use (the embedded member's, or --etcd-servers) */
  readonly etcdEndpoints: string[];
  /** the URL a client on this machine reaches the server at */
  readonly url: string;
  /** where admin.kubeconfig was written; undefined when the client CA is not kapi's */
  readonly kubeconfigPath?: string;
  /** this replica's identity (leader election, lease holder) */
  readonly identity: string;
  /** false once shutdown has begun: /readyz reports it */
  readonly ready: boolean;
  shutdown(reason: string): Promise<void>;
}

/** first to stop (after --shutdown-delay-duration): the listener closes, every watch ends
 *  cleanly (its client resumes on another replica from its last resourceVersion), the
 *  requests in flight are answered within --request-timeout, then the connections close */
async function stopServing(server: SecureServer, serving: ServingOptions, state: ServingState): Promise<void> {
  const { sendRetryAfter, watchGraceMs } = serving.shutdown;
  // with a grace period the watches are ended one after another within it (kube's rate),
  // and cut when it is over; without, all end at once
  const endOpenWatches = async (): Promise<void> => {
    if (watchGraceMs > 0) await state.tracker.endWatches(watchGraceMs);
    state.endWatches.abort();
  };
  if (sendRetryAfter) {
    // kube-apiserver's order: keep listening, answer new requests 429, let the requests
    // in flight finish and the watches end, then close quickly
    state.rejectingNewRequests = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([state.tracker.nonLongRunningDrained(), endOpenWatches()]),
      new Promise<void>((r) => (timer = setTimeout(r, serving.requestTimeoutMs))),
    ]);
    clearTimeout(timer);
    await server.close(2000);
    return;
  }
  const closing = server.close(serving.requestTimeoutMs);
  await endOpenWatches();
  await closing;
}

export async function run(config: CompletedConfig, built: Built, prepared: Prepared, state: ServingState, stack: StopStack): Promise<App> {
  const serving = config.serving;
  const server = createSecureServer({
    cert: built.pki.servingCertPem,
    key: built.pki.servingKeyPem,
    clientCA: built.authn.clientCAs,
    handler: prepared.handler,
    ...built.tls,
  });
  const address = await server.listen(serving.securePort, serving.bindAddress);
  stack.push('https server', () => stopServing(server, serving, state));
  log.info('serving securely', { address: hostPort(address.address, serving.securePort) });
  const missing = missingKapiNodeFlags();
  if (missing.length > 0) {
    log.warn(
      `node runs without bin/kapi's ${missing.join(' and ')}: expect 10-30% more CPU per request; start bin/kapi itself or pass the flags to node`,
    );
  }

  state.ready = true;
  const { url, kubeconfigPath } = prepared.access;
  log.info('kapi is ready', { url, advertiseAddress: serving.advertiseAddress, kubeconfig: kubeconfigPath });
  if (kubeconfigPath) {
    const rel = path.relative(process.cwd(), kubeconfigPath);
    log.info(`try: kubectl --kubeconfig ${rel.startsWith('..') ? kubeconfigPath : rel} get ns`);
  }

  let stopping: Promise<void> | undefined;
  return {
    config: config.source,
    pki: built.pki,
    etcdEndpoints: prepared.etcdEndpoints,
    url,
    kubeconfigPath,
    identity: config.identity,
    get ready() {
      return state.ready;
    },
    shutdown(reason: string) {
      stopping ??= (async () => {
        log.info('shutting down', { reason, shutdownDelay: `${serving.shutdown.delayMs}ms` });
        state.ready = false;
        if (serving.shutdown.delayMs > 0) await sleep(serving.shutdown.delayMs);
        await stack.stopAll();
        log.info('kapi stopped');
      })();
      return stopping;
    },
  };
}
