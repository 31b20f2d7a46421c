// Ending a client's connection politely after the current response, over either protocol:
// HTTP/1.1 gets `Connection: close`; HTTP/2 forbids that header, so its session is closed
// gracefully once the response is out (node sends GOAWAY, streams in flight complete), which
// is what Go's HTTP/2 server does for kube-apiserver's `Connection: close`.

import type { RequestState } from '../../request/types.js';

interface Http2SessionLike {
  readonly closed: boolean;
  readonly destroyed: boolean;
  close(): void;
}

/** the HTTP/2 session a request came on, if it came on one */
export function http2SessionOf(state: RequestState): Http2SessionLike | undefined {
  if (!state.req.httpVersion.startsWith('2')) return undefined;
  return (state.req as unknown as { stream?: { session?: Http2SessionLike } }).stream?.session;
}

export function closeConnectionAfterResponse(state: RequestState): void {
  const session = http2SessionOf(state);
  if (!session) {
    state.res.setHeader('Connection', 'close');
    return;
  }
  const close = (): void => {
    if (!session.closed && !session.destroyed) session.close();
  };
  state.res.once('finish', close);
  state.res.once('close', close);
}
