// The handler chain, as kube-apiserver's DefaultBuildHandlerChain: one wrapper per concern,
// outermost first: audit id -> panic recovery -> request info -> shutdown 429s -> HSTS ->
// cache control -> GOAWAY -> in-flight tracking -> request timeout -> CORS -> audit capture (responses; failed authentication) -> authentication -> audit -> impersonation -> max-in-flight -> authorization -> request metrics -> deprecation warnings -> the API handler.

import { withAudit, withAuditCapture, withAuditInit, withAuthorizationAudit } from './filters/audit.js';
import type { Auditor } from '../audit/config.js';
import { withAuthentication, type AnonymousOptions } from './filters/authentication.js';
import { withAuthorization, type AuthorizationAliases } from './filters/authorization.js';
import { withReplicaHeader } from './filters/replica-header.js';
import { withCacheControl } from './filters/cache-control.js';
import { withCORS } from './filters/cors.js';
import { withDeprecationWarnings, type DeprecationLookup } from './filters/deprecation.js';
import { withProbabilisticGoaway } from './filters/goaway.js';
import { withHSTS } from './filters/hsts.js';
import type { RequestTracker } from './filters/in-flight.js';
import { withShutdownRetryAfter } from './filters/shutdown-retry-after.js';
import { withRequestTimeout } from './filters/timeout.js';
import { withImpersonation } from './filters/impersonation.js';
import { withMaxInFlight, type MaxInFlightOptions } from './filters/max-in-flight.js';
import { withPanicRecovery, type PanicReporter } from './filters/panic-recovery.js';
import { withRequestInfo } from './filters/request-info.js';
import { instrumentAuthenticator, instrumentAuthorizer } from '../metrics/auth.js';
import { withRequestMetrics } from '../metrics/filter.js';
import { alwaysAllow, type Authorizer } from '../authz/authorizer.js';
import type { Authenticator } from '../authn/authenticator.js';
import { nonResourceInfo, type RequestInfo } from '../request/request-info.js';
import type { UserInfo } from '../machinery/user.js';
import { RequestCancellation } from '../request/cancellation.js';
import { isLongRunning } from './filters/long-running.js';
import { parseRequestTarget } from './request-target.js';
import { H1Request } from './h1-exchange.js';
import { errors, type StatusError } from '../machinery/status.js';
import type { Filter, Handler, HttpRequest, HttpResponse, RequestState, UpgradeSocket } from '../request/types.js';

export interface ChainOptions {
  authenticator: Authenticator;
  anonymous?: AnonymousOptions;
  authorizer?: Authorizer;
  /** called for unexpected exceptions (the client gets a 500 Status) */
  onPanic?: PanicReporter;
  /** called when credentials are rejected (the client gets a 401) */
  onAuthenticationFailure?: (err: unknown) => void;
  /** priority and fairness, or the classic max-in-flight limits; absent: no limit */
  maxInFlight?: MaxInFlightOptions;
  /** the HTTP serving flags' filters (timeouts, CORS, HSTS, GOAWAY, shutdown) */
  serving?: ServingFilterOptions;
  /** audit policy and backends (--audit-*); absent: nothing is audited */
  auditor?: Auditor;
  /** non-resource paths authorized as another one (kapi's /status as /metrics) */
  authorizationAliases?: AuthorizationAliases;
  /** --replica-response-header: the name every response carries; absent: no header, no filter */
  replicaName?: string;
  /** which served resources are deprecated (warnings, audit annotations, metric) */
  deprecationOf?: DeprecationLookup;
}

export interface ServingFilterOptions {
  /** --request-timeout in ms (default 60 s) */
  requestTimeoutMs?: number;
  /** --cors-allowed-origins (validated patterns) */
  corsAllowedOrigins?: readonly string[];
  /** --strict-transport-security-directives */
  hstsDirectives?: readonly string[];
  /** --goaway-chance */
  goawayChance?: number;
  /** the AuthorizeWithSelectors gate (default on): selectors reach the authorizers */
  authorizeWithSelectors?: boolean;
  /** the CBORServingAndStorage gate (default off) */
  cbor?: boolean;
  /** the APIResponseCompression gate (default on) */
  responseCompression?: boolean;
  /** --shutdown-send-retry-after: true once shutdown refuses new requests with 429 */
  rejectingNewRequests?: () => boolean;
  /** counts requests in flight and open watches for graceful shutdown */
  tracker?: RequestTracker;
  /** the work behind a timed-out request failed afterwards */
  onPostTimeoutError?: (err: unknown, state: RequestState) => void;
}

export function buildHandlerChain(api: Handler, opts: ChainOptions): Handler {
  const serving = opts.serving ?? {};
  // listed outermost first, applied innermost first
  const filters: Filter[] = [
    withAuditInit(),
    ...(opts.replicaName !== undefined ? [withReplicaHeader(opts.replicaName)] : []),
    withPanicRecovery(opts.onPanic),
    withRequestInfo(),
    ...(serving.rejectingNewRequests ? [withShutdownRetryAfter(serving.rejectingNewRequests)] : []),
    withHSTS(serving.hstsDirectives ?? []),
    withCacheControl(),
    ...(serving.responseCompression === false ? [withoutResponseCompression] : []),
    ...(serving.cbor === true ? [withCbor] : []),
    withProbabilisticGoaway(serving.goawayChance ?? 0),
    ...(serving.tracker ? [serving.tracker.filter] : []),
    withRequestTimeout({ requestTimeoutMs: serving.requestTimeoutMs ?? 60_000, onPostTimeoutError: serving.onPostTimeoutError }),
    withCORS(serving.corsAllowedOrigins ?? []),
    withAuditCapture(opts.auditor),
    withAuthentication({
      authenticator: instrumentAuthenticator(opts.authenticator, opts.anonymous),
      anonymous: opts.anonymous,
      onFailure: opts.onAuthenticationFailure,
    }),
    withAudit(opts.auditor),
    withImpersonation(opts.authorizer ?? alwaysAllow),
    withMaxInFlight(opts.maxInFlight),
    withAuthorizationAudit(instrumentAuthorizer(opts.authorizer ?? alwaysAllow), opts.auditor, (a) =>
      withAuthorization(a, serving.authorizeWithSelectors !== false, opts.authorizationAliases),
    ),
    withRequestMetrics(),
    ...(opts.deprecationOf ? [withDeprecationWarnings(opts.deprecationOf)] : []),
  ];
  return filters.reduceRight<Handler>((next, filter) => filter(next), api);
}

const withoutResponseCompression: Filter = (next) => (state) => {
  state.compressResponses = false;
  return next(state);
};

const withCbor: Filter = (next) => (state) => {
  state.cbor = true;
  return next(state);
};

/**
 * A request's state as the chain makes it. A class, so that `signal` is a getter on the
 * prototype: every state has the same shape, where an object literal with a getter of its own
 * costs a third of a microsecond to make and gives each state a shape of its own.
 */
class IncomingRequestState implements RequestState {
  info: RequestInfo;
  readonly warnings: string[] = [];
  readonly cancellation = new RequestCancellation();
  auditId = '';
  readonly receivedAt = Date.now();
  declare user?: UserInfo;
  declare compressResponses?: boolean;
  declare cbor?: boolean;
  declare bodyObserver?: (chunk: Buffer) => void;

  constructor(
    readonly req: HttpRequest,
    readonly res: HttpResponse,
    readonly method: string,
    readonly path: string,
    readonly query: URLSearchParams,
    readonly upgrade: UpgradeSocket | undefined,
  ) {
    this.info = nonResourceInfo(method, path);
  }

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }

  get cancelled(): boolean {
    return this.cancellation.cancelled;
  }
}

/** what a request whose HTTP/1.1 client ended its side is cancelled with, and answers if its
 *  work is cut short: Go cancels the request's context at that end, and kube-apiserver's
 *  handlers answer a write whose context is done with this 504 (finishRequest) */
function clientEnded(): StatusError {
  return errors.timeout('request did not complete within requested timeout - context canceled');
}

/** The per-request state for a raw request, or undefined when its target cannot be parsed. */
export function newRequestState(req: HttpRequest, res: HttpResponse, upgrade?: UpgradeSocket): RequestState | undefined {
  const method = (req.method ?? 'GET').toUpperCase();
  const target = parseRequestTarget(req.url ?? '/');
  if (!target) return undefined;
  const { path, query } = target;
  const state = new IncomingRequestState(req, res, method, path, query, upgrade);
  // The work behind a request stops when its client goes away. Once a short request's answer
  // has been taken whole nothing of it is left to stop, so it is not aborted then (an abort
  // builds its reason, a DOMException with a stack); long-running handlers may still hold
  // watchers or streams and are aborted whenever their response closes.
  res.on('close', () => {
    if (!res.writableFinished || isLongRunning(state.info)) state.cancellation.cancel();
  });
  if (req instanceof H1Request) req.onClientEnded = () => state.cancellation.cancel(clientEnded());
  return state;
}

/** Adapts a chain to node's `request` event (HTTP/1.1 and HTTP/2 compat alike). */
export function toRequestListener(
  handler: Handler,
  onPanic?: PanicReporter,
): (req: HttpRequest, res: HttpResponse, upgrade?: UpgradeSocket) => void {
  return (req, res, upgrade) => {
    const state = newRequestState(req, res, upgrade);
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
