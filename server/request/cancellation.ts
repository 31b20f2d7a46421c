// A request's abort signal, and the one way to fire it. Each request has a single controller:
// filters that end a request early (its deadline passed) abort that controller instead of
// combining signals, so a request that runs its course allocates one controller and never
// builds an abort reason.

/** the controller of a request's signal, kept on the signal itself: a WeakMap entry per
 *  request cost as much again as the controller */
const CONTROLLER = Symbol('kapi.requestController');

interface RequestSignal extends AbortSignal {
  [CONTROLLER]?: AbortController;
}

/** a fresh signal that `cancelRequest` can abort */
export function newRequestSignal(): AbortSignal {
  const controller = new AbortController();
  (controller.signal as RequestSignal)[CONTROLLER] = controller;
  return controller.signal;
}

/**
 * Aborts the work behind a request whose signal came from `newRequestSignal`; false (and
 * nothing aborted) for any other signal.
 */
export function cancelRequest(signal: AbortSignal, reason?: unknown): boolean {
  const controller = (signal as RequestSignal)[CONTROLLER];
  if (!controller) return false;
  if (!signal.aborted) controller.abort(reason);
  return true;
}
