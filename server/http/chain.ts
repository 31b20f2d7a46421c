// The handler chain, as kube-apiserver's DefaultBuildHandlerChain: one wrapper per concern,
// outermost first: audit id -> panic recovery -> request info -> cache control ->
// authentication -> audit -> impersonation -> max-in-flight -> authorization -> the API handler.

import { withAudit, withAuditInit } from './filters/audit.js';
import { withAuthentication, type AnonymousOptions } from './filters/authentication.js';
import { withAuthorization } from './filters/authorization.js';
import { withCacheControl } from './filters/cache-control.js';
import { withImpersonation } from './filters/impersonation.js';
import { withMaxInFlight } from './filters/max-in-flight.js';
import { withPanicRecovery, type PanicReporter } from './filters/panic-recovery.js';
import { withRequestInfo } from './filters/request-info.js';
import { alwaysAllow, type Authorizer } from './authz.js';
import type { Authenticator } from './authn.js';
import { nonResourceInfo } from './request-info.js';
import { errors } from './status.js';
import type { Filter, Handler, HttpRequest, HttpResponse, RequestState } from './types.js';

export interface ChainOptions {
  authenticator: Authenticator;
  anonymous?: AnonymousOptions;
  authorizer?: Authorizer;
  /** called for unexpected exceptions (the client gets a 500 Status) */
  onPanic?: PanicReporter;
  /** called when credentials are rejected (the client gets a 401) */
  onAuthenticationFailure?: (err: unknown) => void;
}

export function buildHandlerChain(api: Handler, opts: ChainOptions): Handler {
  // listed outermost first, applied innermost first
  const filters: Filter[] = [
    withAuditInit(),
    withPanicRecovery(opts.onPanic),
    withRequestInfo(),
    withCacheControl(),
    withAuthentication({
      authenticator: opts.authenticator,
      anonymous: opts.anonymous,
      onFailure: opts.onAuthenticationFailure,
    }),
    withAudit(),
    withImpersonation(opts.authorizer ?? alwaysAllow),
    withMaxInFlight(),
    withAuthorization(opts.authorizer ?? alwaysAllow),
  ];
  return filters.reduceRight<Handler>((next, filter) => filter(next), api);
}

function decodePath(rawPath: string): string {
  return rawPath
    .split('/')
    .map((seg) => decodeURIComponent(seg))
    .join('/');
}

/** The per-request state for a raw request, or undefined when its URL cannot be parsed. */
export function newRequestState(req: HttpRequest, res: HttpResponse): RequestState | undefined {
  const method = (req.method ?? 'GET').toUpperCase();
  let url: URL;
  let path: string;
  try {
    url = new URL(req.url ?? '/', 'http://kapi.invalid');
    path = decodePath(url.pathname);
  } catch {
    return undefined;
  }
  const abort = new AbortController();
  res.once('close', () => abort.abort());
  return {
    req,
    res,
    method,
    path,
    query: url.searchParams,
    info: nonResourceInfo(method, path),
    warnings: [],
    signal: abort.signal,
    auditId: '',
    receivedAt: Date.now(),
  };
}

/** Adapts a chain to node's `request` event (HTTP/1.1 and HTTP/2 compat alike). */
export function toRequestListener(handler: Handler, onPanic?: PanicReporter): (req: HttpRequest, res: HttpResponse) => void {
  return (req, res) => {
    const state = newRequestState(req, res);
    if (!state) {
      res.statusCode = 400;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('400 Bad Request');
      return;
    }
    handler(state).catch((err: unknown) => {
      // the chain's own panic recovery failed: never let it take the process down
      onPanic?.(err, state);
      if (!res.headersSent) {
        const status = errors.internal(err instanceof Error ? err.message : String(err)).toStatus();
        res.statusCode = 500;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(status) + '\n');
      } else if (!res.writableEnded) {
        res.destroy();
      }
    });
  };
}
