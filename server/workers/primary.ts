// The primary process of a replica started with --workers N > 1. It does the one-time work
// (the PKI, the embedded etcd member, admin.kubeconfig) so the workers do not race for it,
// then forks N workers that each run the whole server (startApp) on the shared listening
// socket: node's cluster module hands accepted connections to the workers in turn. The primary
// serves no request itself. It keeps the replica-wide pieces that cannot be per process: the
// audit log file (audit/relay.ts) and the merge of the workers' metrics (metrics/cluster.ts).
//
// A worker that dies is forked again in its slot, after a back-off that grows while it keeps
// dying soon after its start. A worker that dies before the replica was ever ready means the
// start-up itself fails (a bad flag, a file that cannot be read): the primary stops and exits
// non-zero, as a single process would. SIGTERM/SIGINT: every worker gets SIGTERM and shuts
// down gracefully (its own --shutdown-delay-duration and draining), then the embedded etcd
// stops. If the primary dies, its workers see the IPC channel close and shut down.

import cluster, { type Worker } from 'node:cluster';
import path from 'node:path';
import type { KapiConfig } from '../config/flags.js';
import { ensurePki } from '../pki/pki.js';
import { startEmbeddedEtcd, type EmbeddedEtcd } from '../etcd-embedded/embedded.js';
import { localServerURL, writeKubeconfig } from '../kubeconfig/kubeconfig.js';
import { sharedLogBackendFromFlags } from '../audit/config.js';
import { receiveRelayedAuditLines } from '../audit/relay.js';
import { startMetricsHub } from '../metrics/cluster.js';
import { createLogger } from '../log.js';
import { completeConfig } from '../app/config.js';
import { workerRoleEnv } from './role.js';
import { isWorkerReady } from './messages.js';

const log = createLogger('workers');

const FIRST_RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 30_000;
/** a worker that ran this long before dying restarts without delay growth */
const STABLE_RUN_MS = 60_000;
/** beyond the workers' own drain time (--shutdown-delay-duration + --request-timeout) */
const SHUTDOWN_SLACK_MS = 30_000;

export interface Primary {
  /** resolves when every worker has exited and the embedded etcd has stopped */
  shutdown(reason: string): Promise<void>;
  /** stops at once: SIGKILL to the workers, then the embedded etcd */
  kill(): Promise<void>;
  /** resolves with the exit code the process should end with when the replica stops by itself
   *  (start-up failed) */
  readonly failed: Promise<number>;
}

interface Slot {
  index: number;
  worker?: Worker;
  startedAt: number;
  failures: number;
  restartTimer?: NodeJS.Timeout;
  /** a worker in this slot has been ready at least once */
  wasReady: boolean;
}

export async function startPrimary(config: KapiConfig, workerCount: number, entryScript: string): Promise<Primary> {
  const stoppers: Array<{ name: string; stop: () => Promise<void> | void }> = [];
  const stopAll = async (): Promise<void> => {
    // a second call (kill during shutdown) finds nothing left to stop
    for (const s of stoppers.splice(0).reverse()) {
      try {
        await s.stop();
      } catch (err) {
        log.error('stopping failed', { component: s.name, error: (err as Error).message });
      }
    }
  };

  // every option is checked once here, so a bad one ends start-up before etcd or a worker starts
  const pki = await ensurePki(completeConfig(config).pki);
  let embeddedEtcdEndpoints: string[] | undefined;
  if (config.etcd.servers.length === 0) {
    const embedded: EmbeddedEtcd = await startEmbeddedEtcd({ dataDir: config.dataDir, avoidPorts: [config.serving.securePort] });
    stoppers.push({ name: 'embedded etcd', stop: () => embedded.stop() });
    embeddedEtcdEndpoints = [embedded.endpoint];
  }
  const url = localServerURL(config.serving.bindAddress, config.serving.securePort);
  if (pki.admin) {
    writeKubeconfig(path.join(config.dataDir, 'admin.kubeconfig'), {
      server: url,
      caPem: pki.servingCaPem,
      clientCertPem: pki.admin.certPem,
      clientKeyPem: pki.admin.keyPem,
    });
  }
  const auditLog = sharedLogBackendFromFlags(config.rawValues, log.named('audit'));
  if (auditLog) {
    const receiver = receiveRelayedAuditLines(auditLog);
    // the file closes after the last worker's last lines
    stoppers.push({
      name: 'audit log',
      stop: async () => {
        receiver.stop();
        await auditLog.shutdown();
      },
    });
  }
  const metricsHub = startMetricsHub();
  stoppers.push({ name: 'metrics hub', stop: () => metricsHub.stop() });

  cluster.setupPrimary({ exec: entryScript, args: process.argv.slice(2) });
  const slots: Slot[] = Array.from({ length: workerCount }, (_, index) => ({ index, startedAt: 0, failures: 0, wasReady: false }));
  /** every slot's worker has been ready once: from now on a dying worker is restarted */
  let replicaReady = false;
  let stopping = false;
  let reportFailure: (code: number) => void = () => undefined;
  const failed = new Promise<number>((resolve) => (reportFailure = resolve));

  const fork = (slot: Slot): void => {
    slot.restartTimer = undefined;
    slot.startedAt = Date.now();
    let ready = false;
    const worker = cluster.fork(workerRoleEnv({ index: slot.index, count: workerCount, embeddedEtcdEndpoints }));
    slot.worker = worker;
    log.info('worker started', { worker: slot.index, pid: worker.process.pid });
    worker.on('message', (m: unknown) => {
      if (!isWorkerReady(m) || ready) return;
      ready = true;
      slot.wasReady = true;
      if (replicaReady) log.info('worker ready', { worker: slot.index, pid: worker.process.pid });
      else if (slots.every((s) => s.wasReady)) {
        replicaReady = true;
        log.info('kapi is ready', {
          url,
          workers: workerCount,
          kubeconfig: pki.admin ? path.join(config.dataDir, 'admin.kubeconfig') : undefined,
        });
      }
    });
    worker.on('exit', (code, signal) => {
      slot.worker = undefined;
      if (stopping) return;
      if (!replicaReady && !ready) {
        log.error('a worker failed to start; stopping', { worker: slot.index, code, signal });
        reportFailure(1);
        return;
      }
      slot.failures = Date.now() - slot.startedAt >= STABLE_RUN_MS ? 0 : slot.failures + 1;
      const delayMs = slot.failures === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** (slot.failures - 1));
      log.warn('worker exited; starting it again', { worker: slot.index, pid: worker.process.pid, code, signal, delay: `${delayMs}ms` });
      slot.restartTimer = setTimeout(() => fork(slot), delayMs);
    });
  };
  for (const slot of slots) fork(slot);

  const running = (): Worker[] => slots.flatMap((s) => (s.worker ? [s.worker] : []));
  const exited = (w: Worker): Promise<void> => (w.isDead() ? Promise.resolve() : new Promise((resolve) => w.once('exit', () => resolve())));
  const haltRestarts = (): void => {
    stopping = true;
    for (const s of slots) clearTimeout(s.restartTimer);
  };

  let shuttingDown: Promise<void> | undefined;
  return {
    failed,
    shutdown(reason) {
      shuttingDown ??= (async () => {
        haltRestarts();
        const workers = running();
        log.info('stopping the workers', { reason, workers: workers.length });
        for (const w of workers) w.process.kill('SIGTERM');
        const graceMs = config.shutdownDelayMs + config.values.get('request-timeout') + SHUTDOWN_SLACK_MS;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([Promise.all(workers.map(exited)), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
        clearTimeout(timer);
        for (const w of running()) {
          log.warn('worker did not stop in time; killing it', { pid: w.process.pid });
          w.process.kill('SIGKILL');
        }
        await Promise.all(running().map(exited));
        await stopAll();
        log.info('kapi stopped');
      })();
      return shuttingDown;
    },
    async kill() {
      haltRestarts();
      const workers = running();
      for (const w of workers) w.process.kill('SIGKILL');
      await Promise.all(workers.map(exited));
      await stopAll();
    },
  };
}
