// The aggregator's caches of what backends serve (discovery, OpenAPI) refresh on a period and
// at once when the APIServices change, until their signal aborts.

import { sleep } from '../controllers/util.js';
import type { APIServiceIndex } from './api-services.js';

export async function refreshLoop(
  index: APIServiceIndex,
  refresh: (signal: AbortSignal) => Promise<void>,
  periodMs: number,
  signal: AbortSignal,
): Promise<void> {
  await index.synced;
  let dirty = true;
  let wake: (() => void) | undefined;
  const unsubscribe = index.onChange(() => {
    dirty = true;
    wake?.();
  });
  try {
    while (!signal.aborted) {
      dirty = false;
      await refresh(signal).catch(() => undefined);
      if (dirty) continue;
      // aborted during the refresh: the signal fires no more 'abort', so the pause below
      // would last the whole period
      if (signal.aborted) break;
      const pause = new AbortController();
      const onAbort = (): void => pause.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      wake = onAbort;
      await sleep(periodMs, pause.signal);
      wake = undefined;
      signal.removeEventListener('abort', onAbort);
    }
  } finally {
    unsubscribe();
  }
}
