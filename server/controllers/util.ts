// Small helpers every controller uses: the request context of an in-process client, the
// error predicates client-go offers (IsNotFound, IsConflict, ...), abortable sleeping.

export { isAlreadyExists, isConflict, isMethodNotSupported, isNotFound } from '../machinery/status.js';
import type { ReadFence } from '../../storage/read-fence.js';
import type { RequestContext } from '../registry/rest.js';

/** kube-controller-manager and kube-apiserver's own loopback client both act as cluster admins */
export function internalContext(fieldManager: string, namespace: string, signal?: AbortSignal, readFence?: ReadFence): RequestContext {
  const ctx: RequestContext = {
    user: { username: `system:${fieldManager}`, groups: ['system:masters', 'system:authenticated'] },
    namespace,
    dryRun: false,
    fieldManager,
    fieldValidation: 'Ignore',
    warnings: [],
    cancellation: signal ? { signal } : undefined,
  };
  // the reads of one request's admission share its fence (storage/read-fence.ts)
  if (readFence) ctx.readFence = readFence;
  return ctx;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** resolves after `ms`, or at once when `signal` aborts (never rejects) */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
