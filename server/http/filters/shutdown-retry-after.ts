// --shutdown-send-retry-after: once shutdown stops accepting new requests (after
// --shutdown-delay-duration) the listener stays open until the requests in flight are done,
// and every new request meanwhile is answered 429 with Retry-After and its connection closed,
// so clients retry elsewhere instead of meeting a closed port. Health and metrics endpoints,
// and kube-apiserver's own loopback clients, are still served.

import type { Filter, RequestState } from '../../request/types.js';
import { header } from '../../request/types.js';
import { closeConnectionAfterResponse } from './connection.js';

const EXEMPT_PREFIXES = ['/readyz', '/livez', '/healthz', '/metrics'];
export const SHUTTING_DOWN_MESSAGE = 'The apiserver is shutting down, please try again later.';

function exempt(state: RequestState): boolean {
  if ((header(state.req, 'user-agent') ?? '').startsWith('kube-apiserver/')) return true;
  return EXEMPT_PREFIXES.some((p) => state.path.startsWith(p));
}

/** `rejecting()` is true from the moment new requests are no longer accepted */
export function withShutdownRetryAfter(rejecting: () => boolean): Filter {
  return (next) => async (state) => {
    if (!rejecting() || exempt(state)) {
      await next(state);
      return;
    }
    closeConnectionAfterResponse(state);
    const body = SHUTTING_DOWN_MESSAGE + '\n';
    const res = state.res;
    res.setHeader('Retry-After', '5');
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.statusCode = 429;
    res.end(body);
  };
}
