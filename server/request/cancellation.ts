// A request's abort signal, and the one way to fire it. Each request has a single controller:
// filters that end a request early (its deadline passed) abort that controller instead of
// combining signals, so a request that runs its course allocates one controller and never
// builds an abort reason.

const controllers = new WeakMap<AbortSignal, AbortController>();

/** a fresh signal that `cancelRequest` can abort */
export function newRequestSignal(): AbortSignal {
  const controller = new AbortController();
  controllers.set(controller.signal, controller);
  return controller.signal;
}

/**
 * Aborts the work behind a request whose signal came from `newRequestSignal`; false (and
 * nothing aborted) for any other signal.
 */
export function cancelRequest(signal: AbortSignal, reason?: unknown): boolean {
  const controller = controllers.get(signal);
  if (!controller) return false;
  if (!signal.aborted) controller.abort(reason);
  return true;
}
