// The webhooks of every Mutating- or ValidatingWebhookConfiguration, kept current by a
// watch on the registry (each replica runs its own, so a change made through any replica
// applies within the watch latency). Configurations run in name order, webhooks in order.

import { startInformer, type Informer } from '../../authz/informer.js';
import type { Logger, LogFields } from '../../log.js';
import type { AdmissionDeps } from '../plugin.js';
import type { WebhookEntry, WebhookSpec } from './types.js';

export interface WebhookSource {
  /** whether the first list is in (then `ready` need not be waited for) */
  readonly synced: boolean;
  /** resolves once the first list is in */
  ready(signal?: AbortSignal): Promise<void>;
  webhooks(): WebhookEntry[];
}

export function loggerFrom(deps: AdmissionDeps): Logger {
  const fields = (f?: LogFields) => f as Record<string, unknown> | undefined;
  const logger: Logger = {
    info: (m, f) => deps.log('info', m, fields(f)),
    warn: (m, f) => deps.log('warn', m, fields(f)),
    error: (m, f) => deps.log('error', m, fields(f)),
    v: () => ({ info: () => {} }),
    named: () => logger,
  };
  return logger;
}

export function startWebhookSource(
  resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations',
  deps: AdmissionDeps,
): WebhookSource {
  const rest = deps.resolver.lookup('admissionregistration.k8s.io', 'v1', resource);
  if (!rest) {
    return { synced: true, ready: async () => {}, webhooks: () => [] };
  }
  const informer: Informer = startInformer(rest, loggerFrom(deps), deps.signal);
  let cache: WebhookEntry[] | undefined;
  informer.onChange(() => {
    cache = undefined;
  });
  return {
    get synced() {
      return informer.hasSynced;
    },
    async ready(signal) {
      if (informer.hasSynced) return;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(new Error('request canceled'));
        // a request cancelled already fires no 'abort': it would wait for the sync regardless
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        informer.synced.then(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, reject);
      });
    },
    webhooks() {
      if (cache) return cache;
      const configs = informer
        .list()
        .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
      const out: WebhookEntry[] = [];
      for (const c of configs) {
        const hooks = ((c as unknown as { webhooks?: WebhookSpec[] }).webhooks ?? []) as WebhookSpec[];
        hooks.forEach((spec, i) =>
          out.push({ uid: `${c.metadata.name}/${i}/${spec.name}`, configurationName: c.metadata.name ?? '', spec }),
        );
      }
      cache = out;
      return out;
    },
  };
}
