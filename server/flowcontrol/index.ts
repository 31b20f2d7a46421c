// API Priority and Fairness in one replica: keeps the bootstrap configuration in the cluster
// (at start, then every minute), follows FlowSchemas and PriorityLevelConfigurations through
// watch-fed informers into the FlowController the handler chain asks, and records on each
// FlowSchema whether its priority level exists (the Dangling condition).

import type { KubeObject } from '../../storage/interface.js';
import type { ResourceResolver } from '../registry/rest.js';
import { startInformer, type Informer } from '../authz/informer.js';
import { internalContext, sleep } from '../controllers/util.js';
import type { Logger } from '../log.js';
import { FLOWCONTROL_GROUP, FLOWCONTROL_VERSION } from './bootstrap.js';
import { FlowController, type FlowControllerOptions } from './controller.js';
import { ensureBootstrapConfiguration } from './ensure.js';

export { FlowController, type Admission, type Classification, type PriorityLevelStatus } from './controller.js';
export type { RequestDigest } from './classifier.js';

const statusFieldManager = 'api-priority-and-fairness-config-consumer-v1';
const ENSURE_INTERVAL_MS = 60_000;

export interface RunningFlowControl {
  readonly controller: FlowController;
  /** resolves after the first complete pass that put the bootstrap objects in place */
  readonly bootstrapped: Promise<void>;
  stop(): void;
}

export interface StartFlowControlOptions extends FlowControllerOptions {
  resolver: ResourceResolver;
  log: Logger;
  /** how often the bootstrap objects are checked again (default one minute) */
  ensureIntervalMs?: number;
}

function danglingCondition(level: string, dangling: boolean) {
  return dangling
    ? {
        status: 'True',
        reason: 'NotFound',
        message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object`,
      }
    : {
        status: 'False',
        reason: 'Found',
        message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists`,
      };
}

export function startFlowControl(opts: StartFlowControlOptions): RunningFlowControl {
  const abort = new AbortController();
  const signal = abort.signal;
  const controller = new FlowController(opts);
  const log = opts.log;

  const schemasRes = opts.resolver.lookup(FLOWCONTROL_GROUP, FLOWCONTROL_VERSION, 'flowschemas');
  const levelsRes = opts.resolver.lookup(FLOWCONTROL_GROUP, FLOWCONTROL_VERSION, 'prioritylevelconfigurations');
  const served = schemasRes !== undefined && levelsRes !== undefined;

  const bootstrapped = (async () => {
    // --runtime-config turned the API off: nothing to keep
    if (!served) return;
    let retryMs = 200;
    while (!signal.aborted) {
      try {
        const r = await ensureBootstrapConfiguration(opts.resolver, signal);
        if (r.created.length || r.updated.length)
          log.info('priority and fairness configuration ensured', { created: r.created.length, updated: r.updated.length });
        return;
      } catch (err) {
        if (signal.aborted) return;
        log.v(1).info('ensuring the priority and fairness configuration failed, retrying', { err: (err as Error).message });
        await sleep(retryMs, signal);
        retryMs = Math.min(retryMs * 2, 5000);
      }
    }
  })();
  void (async () => {
    await bootstrapped;
    while (served && !signal.aborted) {
      await sleep(opts.ensureIntervalMs ?? ENSURE_INTERVAL_MS, signal);
      if (signal.aborted) return;
      try {
        await ensureBootstrapConfiguration(opts.resolver, signal);
      } catch (err) {
        if (!signal.aborted) log.v(1).info('ensuring the priority and fairness configuration failed', { err: (err as Error).message });
      }
    }
  })();

  const statusRes = opts.resolver.lookup(FLOWCONTROL_GROUP, FLOWCONTROL_VERSION, 'flowschemas', 'status');
  let schemas: Informer | undefined;
  let levels: Informer | undefined;
  if (schemasRes && levelsRes) {
    schemas = startInformer(schemasRes, log, signal);
    levels = startInformer(levelsRes, log, signal);
    const statusWrites = new Set<string>();
    const writeStatus = (fs: KubeObject, dangling: boolean) => {
      const name = fs.metadata.name ?? '';
      const level = String(
        (fs.spec as { priorityLevelConfiguration?: { name?: unknown } } | undefined)?.priorityLevelConfiguration?.name ?? '',
      );
      const want = danglingCondition(level, dangling);
      const conditions = (fs.status as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions ?? [];
      const have = conditions.find((c) => c.type === 'Dangling');
      if (have && have.status === want.status && have.reason === want.reason && have.message === want.message) return;
      if (!statusRes || statusWrites.has(name)) return;
      statusWrites.add(name);
      void statusRes
        .update(
          internalContext(statusFieldManager, '', signal),
          name,
          (current) => {
            if (!current) throw new Error(`flowschema ${name} is gone`);
            const status = { ...((current.status as Record<string, unknown> | undefined) ?? {}) };
            const all = Array.isArray(status.conditions) ? (status.conditions as Array<Record<string, unknown>>) : [];
            const now = all.find((c) => c.type === 'Dangling');
            // another replica may have written it already
            if (now && now.status === want.status && now.reason === want.reason && now.message === want.message) return current;
            const others = all.filter((c) => c.type !== 'Dangling');
            const condition = { type: 'Dangling', ...want, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
            status.conditions = [...others, condition];
            return { ...current, status };
          },
          { allowCreate: false },
        )
        .catch((err: unknown) => {
          if (!signal.aborted) log.v(2).info('writing a FlowSchema status failed', { name, err: (err as Error).message });
        })
        .finally(() => statusWrites.delete(name));
    };
    const rebuild = () => {
      if (!schemas!.hasSynced || !levels!.hasSynced) return;
      const fsObjects = schemas!.list();
      controller.update(fsObjects, levels!.list());
      const dangling = controller.danglingSchemas();
      for (const fs of fsObjects) {
        const d = dangling.get(fs.metadata.name ?? '');
        if (d !== undefined) writeStatus(fs, d);
      }
    };
    schemas.onChange(rebuild);
    levels.onChange(rebuild);
    void Promise.all([schemas.synced, levels.synced]).then(rebuild);
  } else {
    log.warn('flowcontrol.apiserver.k8s.io/v1 is not served: priority and fairness uses only the mandatory configuration');
  }

  return {
    controller,
    bootstrapped,
    stop: () => {
      abort.abort();
      schemas?.stop();
      levels?.stop();
    },
  };
}
