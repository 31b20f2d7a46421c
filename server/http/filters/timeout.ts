// --request-timeout for non-long-running requests, as kube-apiserver's WithRequestDeadline and
// WithTimeoutForNonLongRunningRequests together: the deadline is the flag's value from the
// moment the request arrived, shortened (never lengthened) by a positive `?timeout=` Go
// duration; a malformed one is a 400. The deadline covers writing the response too (writers
// resolve once the client has taken the body). When it passes first the client gets a 504, or,
// once the answer has begun, its connection or stream is cut; the work behind the request is
// aborted and whatever it writes afterwards goes nowhere.

import { parseDuration } from '../../machinery/duration.js';
import { writeStatusError } from '../../request/response.js';
import { errors } from '../../machinery/status.js';
import type { Filter, HttpResponse, RequestState } from '../../request/types.js';
import { isLongRunning } from './long-running.js';

export interface RequestTimeoutOptions {
  /** --request-timeout in ms */
  requestTimeoutMs: number;
  /** called when the work behind a timed-out request fails afterwards */
  onPostTimeoutError?: (err: unknown, state: RequestState) => void;
}

const INVALID_TIMEOUT = 'invalid timeout specified in the request URL';
const TIMEOUT_MESSAGE = 'Timeout: request did not complete within the allotted timeout';

/**
 * The 504 exactly as kube-apiserver's timeout writer sends it: the bare Status (no kind or
 * apiVersion) with a sniffed text/plain content type, which is why clients report it as "the
 * server was unable to return a response in the time allotted".
 */
export function timeoutBody(): string {
  return JSON.stringify({ metadata: {}, status: 'Failure', message: TIMEOUT_MESSAGE, reason: 'Timeout', details: {}, code: 504 }) + '\n';
}

/** the deadline's length for a request, or a message for a malformed `?timeout=` */
export function effectiveTimeoutMs(query: URLSearchParams, requestTimeoutMs: number): number | { invalid: string } {
  const asked = query.get('timeout');
  if (asked === null || asked === '') return requestTimeoutMs;
  let ms: number;
  try {
    ms = parseDuration(asked);
  } catch (err) {
    return { invalid: `${INVALID_TIMEOUT} - ${(err as Error).message}` };
  }
  // 0 or negative: the client sets no limit of its own; more than the flag: the flag wins
  return ms > 0 && ms < requestTimeoutMs ? ms : requestTimeoutMs;
}

export function withRequestTimeout(opts: RequestTimeoutOptions): Filter {
  return (next) => async (state) => {
    if (isLongRunning(state.info)) return next(state);
    const limit = effectiveTimeoutMs(state.query, opts.requestTimeoutMs);
    if (typeof limit !== 'number') {
      await writeStatusError(state, errors.badRequest(limit.invalid));
      return;
    }
    const res = state.res;
    const remainingMs = state.receivedAt + limit - Date.now();
    if (remainingMs < 1) {
      // (as good as) past its deadline already, e.g. ?timeout=1ns: timers have millisecond
      // granularity, so nothing is started for it
      writeTimeout(res, snapshotHeaders(res));
      return;
    }

    const headersBefore = snapshotHeaders(res);
    let timedOut = false;
    // a settled-once promise rather than a race against a deadline promise: no promise, and
    // no abort, for the request that finishes in time
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        timedOut = true;
        // the work behind the request stops: its storage calls see the request's signal abort
        state.cancellation.cancel();
        if (!res.headersSent) {
          writeTimeout(res, headersBefore);
        } else if (!res.writableFinished) {
          // the answer had begun (or the client has not taken all of it): it cannot become a
          // 504 any more, so the connection (HTTP/1.1) or the stream (HTTP/2) is cut, which
          // also frees what was queued for it
          res.destroy();
        }
        silenceResponse(res);
        resolve();
      }, remainingMs);
      next(state).then(
        () => {
          if (timedOut) return;
          clearTimeout(timer);
          resolve();
        },
        (err: unknown) => {
          if (timedOut) {
            opts.onPostTimeoutError?.(err, state);
            return;
          }
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  };
}

type HeaderSnapshot = Record<string, string | number | string[]>;

/** node's getHeaders is already a copy, and setHeader refuses undefined values */
function snapshotHeaders(res: HttpResponse): HeaderSnapshot {
  return (res as unknown as { getHeaders?: () => HeaderSnapshot }).getHeaders?.() ?? {};
}

/** the 504 with the headers the outer filters had set (the handler's own are dropped) */
function writeTimeout(res: HttpResponse, headers: HeaderSnapshot): void {
  const current = (res as unknown as { getHeaderNames?: () => string[] }).getHeaderNames?.() ?? [];
  for (const name of current) if (!(name in headers)) res.removeHeader(name);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  const body = timeoutBody();
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.statusCode = 504;
  res.end(body);
}

const WRITERS = ['setHeader', 'removeHeader', 'writeHead', 'write', 'end', 'flushHeaders', 'destroy', 'addTrailers'] as const;

/**
 * From now on the response drops every write (callbacks still run), so the late handler
 * neither fails nor touches the 504 that was sent, nor cuts the connection it went out on.
 * The response itself is changed, once the deadline has been dealt with, rather than handing
 * the handler a wrapper: a wrapper would cost every request, not only the one that timed out.
 */
export function silenceResponse(res: HttpResponse): void {
  for (const name of WRITERS) {
    Object.defineProperty(res, name, {
      configurable: true,
      writable: true,
      value: (...args: unknown[]) => {
        const cb = args.find((a) => typeof a === 'function') as (() => void) | undefined;
        if (cb) queueMicrotask(cb);
        return name === 'write' ? true : undefined;
      },
    });
  }
  // what a late handler sets (a status code, say) goes nowhere either
  for (const name of ['statusCode', 'statusMessage', 'sendDate'] as const) {
    const value = (res as unknown as Record<string, unknown>)[name];
    Object.defineProperty(res, name, { configurable: true, get: () => value, set: () => {} });
  }
}
