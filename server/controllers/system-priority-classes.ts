// The two built-in PriorityClasses kube-apiserver creates at start-up (its scheduling storage's
// post-start hook): system-node-critical and system-cluster-critical. Pods of the control plane
// and of node agents name them, and the Priority admission plugin resolves them like any other
// class. Every replica runs this; a class that exists is left as it is.

import type { KubeObject } from '../../storage/interface.js';
import { defaultLogger, type Controller, type ControllerDeps } from './types.js';
import { errorMessage, internalContext, isAlreadyExists, isNotFound, sleep } from './util.js';

export const systemPriorityClasses: readonly KubeObject[] = [
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'system-node-critical' },
    value: 2000001000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'system-cluster-critical' },
    value: 2000000000,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

/** creates the missing system classes; a lost create race is success */
export async function ensureSystemPriorityClasses(deps: Pick<ControllerDeps, 'resolver' | 'log'>, signal?: AbortSignal): Promise<void> {
  const rest = deps.resolver.lookup('scheduling.k8s.io', 'v1', 'priorityclasses');
  if (!rest) return; // scheduling.k8s.io/v1 turned off by --runtime-config
  const ctx = internalContext('kube-apiserver', '', signal);
  for (const pc of systemPriorityClasses) {
    const name = pc.metadata.name ?? '';
    try {
      await rest.get(ctx, name, {});
      continue;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await rest.create(ctx, structuredClone(pc));
      (deps.log ?? defaultLogger).info('created PriorityClass', { name, value: String(pc.value) });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}

/** ensures the classes at start (retrying until it succeeds), then again every `resyncMs` */
export function systemPriorityClassesController(deps: ControllerDeps, opts: { resyncMs?: number } = {}): Controller {
  const log = deps.log ?? defaultLogger;
  const resyncMs = opts.resyncMs ?? 60_000;
  return {
    name: 'system-priority-classes',
    async start(signal) {
      let retryMs = 200;
      while (!signal.aborted) {
        try {
          await ensureSystemPriorityClasses(deps, signal);
          retryMs = 200;
          await sleep(resyncMs, signal);
        } catch (err) {
          if (signal.aborted) return;
          log.warn('creating the system PriorityClasses failed, retrying', { err: errorMessage(err) });
          await sleep(retryMs, signal);
          retryMs = Math.min(retryMs * 2, 10_000);
        }
      }
    },
  };
}
