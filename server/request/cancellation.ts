// A request's cancellation: cancelled when its client goes away or its deadline passes. Its
// AbortSignal is made only when something asks for it. Node makes an AbortSignal by turning an
// EventTarget into one (a prototype change V8 does slowly, about 2 µs), and alternated runs put
// a tenth of a GET's CPU on that signal: a GET answered from the watch cache never waits on
// anything and so never needs one. Whoever asks after the cancellation gets a signal that is
// aborted already, so a lazy signal behaves as one made at the start.

/** the error a stream gives when its peer goes away before the end (node's own words) */
export function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/** an error of work that stopped because its signal aborted (node's AbortError, or the
 *  reason the signal was given) */
export function isAbortError(err: unknown, reason: unknown): boolean {
  if (err === reason) return true;
  return err instanceof Error && (err.name === 'AbortError' || (err as { code?: unknown }).code === 'ABORT_ERR');
}

/** what work stopped by `signal` fails with: its reason, or a premature close */
export function abortReasonOf(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : prematureClose();
}

export class RequestCancellation {
  #controller: AbortController | undefined;
  #cancelled = false;
  #reason: unknown;

  get signal(): AbortSignal {
    let controller = this.#controller;
    if (!controller) {
      controller = this.#controller = new AbortController();
      if (this.#cancelled) controller.abort(this.#reason);
    }
    return controller.signal;
  }

  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** what the cancellation was given as its reason (undefined before it, or when none) */
  get reason(): unknown {
    return this.#reason;
  }

  /** aborts the work behind the request (once; later calls change nothing) */
  cancel(reason?: unknown): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
