// Audit, as kube-apiserver's filters do it.
// - `withAuditInit` (outermost) gives every response, even a 401, its Audit-Id (the client's
//   when it sent one).
// - `withAuditCapture` (before authentication) watches what the response writes: the status
//   code, the start of a streamed response, and the body (for the event's responseStatus and
//   responseObject). A request whose authentication failed is audited here: one event at
//   ResponseStarted, without a user, as kube-apiserver's failed-authentication handler does.
// - `withAudit` (after authentication) evaluates the policy and records the request's event at
//   RequestReceived, ResponseStarted (long-running requests only), ResponseComplete or Panic.
// - `withAuthorizationAudit` records the authorizer's decision as event annotations.
// The per-request record lives in a WeakMap keyed by the request state.

import { gunzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import type { Auditor } from '../../audit/config.js';
import {
  eventJson,
  nowMicros,
  sourceIPs,
  truncateUserAgent,
  withoutManagedFields,
  type EventRecord,
  type ResponseStatus,
} from '../../audit/event.js';
import { levelAtLeast, type PolicyAttributes, type RequestAuditConfig, type Stage } from '../../audit/policy.js';
import type { UserInfo } from '../../machinery/user.js';
import { decodeProtobufBody } from '../../protobuf/http.js';
import { writeBody } from '../../request/response.js';
import { decodeBody } from '../../request/negotiation.js';
import { setAuditAnnotationSink } from '../../request/audit-annotations.js';
import type { Authorizer } from '../../authz/authorizer.js';
import { isLongRunning } from './long-running.js';
import { header, type Filter, type HttpRequest, type HttpResponse, type RequestState } from '../../request/types.js';

export function withAuditInit(): Filter {
  // not an async layer of its own: the request goes on in the same promise
  return (next) => (state) => {
    const given = header(state.req, 'audit-id');
    state.auditId = given && given.trim() !== '' ? given.trim() : randomUUID();
    if (!state.res.headersSent) state.res.setHeader('Audit-Id', state.auditId);
    return next(state);
  };
}

/** bodies past this are not recorded (the event still is) */
const MAX_CAPTURE_BYTES = 16 * 1024 * 1024;
/** below RequestResponse a body is kept only when it may be a Status */
const STATUS_SIZED_BYTES = 64 * 1024;

/** what the response wrote, as far as auditing needs it */
class ResponseTap {
  code?: number;
  contentType = '';
  contentEncoding = '';
  private chunks: Buffer[] = [];
  private bytes = 0;
  private overflow = false;
  /** false once the policy says no body is needed */
  wantBody = true;
  /** bodies are kept only up to this size */
  limit = MAX_CAPTURE_BYTES;
  onHead?: (code: number) => void;

  head(res: HttpResponse, code: number, headers?: Record<string, string | number | string[]>): void {
    if (this.code !== undefined) return;
    this.code = code;
    const pick = (name: string): string => {
      const fromArg = headers ? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1] : undefined;
      const v = fromArg ?? res.getHeader(name);
      return Array.isArray(v) ? String(v[0] ?? '') : v === undefined ? '' : String(v);
    };
    this.contentType = pick('content-type').toLowerCase();
    this.contentEncoding = pick('content-encoding').toLowerCase();
    const declared = Number(pick('content-length'));
    if (Number.isFinite(declared) && declared > this.limit) this.overflow = true;
    this.onHead?.(code);
  }

  body(chunk: unknown): void {
    if (!this.wantBody || this.overflow || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : undefined;
    if (!buf) return;
    if (this.bytes + buf.length > this.limit) {
      this.overflow = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(buf);
    this.bytes += buf.length;
  }

  /** the body as a value, when it was kept whole and is JSON or YAML */
  decoded(): unknown {
    if (!this.wantBody || this.overflow || this.bytes === 0) return undefined;
    try {
      let buf = Buffer.concat(this.chunks);
      if (this.contentEncoding === 'gzip') buf = gunzipSync(buf, { maxOutputLength: MAX_CAPTURE_BYTES * 8 });
      return decodeText(buf, this.contentType);
    } catch {
      return undefined;
    }
  }
}

/** a body as JSON-shaped data (protobuf bodies of built-in kinds included) */
function decodeText(buf: Buffer, contentType: string): unknown {
  if (contentType.includes('protobuf')) return decodeProtobufBody(buf);
  // the decoders the endpoints use: bounded in depth and aliases, linear in time
  if (contentType.includes('json')) return decodeBody(buf, 'json');
  if (contentType.includes('yaml')) return decodeBody(buf, 'yaml');
  return undefined;
}

function installTap(res: HttpResponse, tap: ResponseTap): void {
  const writeHead = res.writeHead.bind(res);
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  const flushHeaders = res.flushHeaders.bind(res);
  res.writeHead = (code, headers) => {
    tap.head(res, code, headers);
    return writeHead(code, headers);
  };
  res.flushHeaders = () => {
    tap.head(res, res.statusCode);
    flushHeaders();
  };
  // HTTP/2's end() writes its last chunk through write(): count it once
  let ending = false;
  res.write = (chunk, cb) => {
    if (!ending) {
      tap.head(res, res.statusCode);
      tap.body(chunk);
    }
    return write(chunk, cb);
  };
  res.end = (chunk, cb) => {
    tap.head(res, res.statusCode);
    tap.body(chunk);
    ending = true;
    try {
      return end(chunk, cb);
    } finally {
      ending = false;
    }
  };
}

/** what the request body was, as its reader hands it over (RequestState.bodyObserver) */
class RequestTap {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private overflow = false;

  constructor(state: RequestState) {
    state.bodyObserver = (chunk) => this.push(chunk);
  }

  private push(chunk: Buffer): void {
    if (this.overflow) return;
    if (this.bytes + chunk.length > MAX_CAPTURE_BYTES) {
      this.overflow = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  decoded(contentType: string): unknown {
    if (this.overflow || this.bytes === 0) return undefined;
    try {
      return decodeText(Buffer.concat(this.chunks), contentType.toLowerCase());
    } catch {
      return undefined;
    }
  }
}

/** the audit record of one request */
interface RequestAudit {
  config: RequestAuditConfig;
  event: EventRecord;
  /** the user authentication found (impersonation replaces state.user later) */
  authenticated?: UserInfo;
  longRunning: boolean;
  requestTap?: RequestTap;
}

interface CaptureState {
  /** the client's address, read on arrival: after the response its socket may be gone */
  remoteAddress?: string;
  tap: ResponseTap;
  audit?: RequestAudit;
}

const captures = new WeakMap<RequestState, CaptureState>();

/** Adds annotations (admission's) to the request's audit event; nothing when it is not
 *  audited. An existing key keeps its first value, as kube's AddAnnotation does. */
function annotate(state: RequestState, annotations: Record<string, string>): void {
  const event = captures.get(state)?.audit?.event;
  if (!event) return;
  for (const [k, v] of Object.entries(annotations)) if (!event.annotations.has(k)) event.annotations.set(k, v);
}

function policyAttributes(state: RequestState): PolicyAttributes {
  const i = state.info;
  return {
    user: state.user,
    verb: i.verb,
    isResourceRequest: i.isResourceRequest,
    path: state.path,
    apiGroup: i.apiGroup,
    resource: i.resource,
    subresource: i.subresource,
    namespace: i.namespace,
    name: i.name,
  };
}

function remoteAddress(req: HttpRequest): string | undefined {
  const socket = req.socket as { remoteAddress?: string } | undefined;
  return socket?.remoteAddress;
}

function newEvent(state: RequestState, config: RequestAuditConfig): EventRecord {
  const i = state.info;
  const ev: EventRecord = {
    level: config.level,
    auditID: state.auditId,
    requestURI: state.req.url ?? state.path,
    verb: i.verb,
    user: state.user,
    sourceIPs: sourceIPs(
      header(state.req, 'x-forwarded-for'),
      header(state.req, 'x-real-ip'),
      captures.get(state)?.remoteAddress ?? remoteAddress(state.req),
    ),
    userAgent: truncateUserAgent(header(state.req, 'user-agent') ?? ''),
    requestReceivedMicros: state.receivedAt * 1000,
    annotations: new Map(),
  };
  if (i.isResourceRequest) {
    ev.objectRef = {
      resource: i.resource,
      namespace: i.namespace,
      name: i.name,
      apiGroup: i.apiGroup,
      apiVersion: i.apiVersion,
      subresource: i.subresource,
    };
  }
  return ev;
}

/** Hands one stage's event to the backends; never throws, waits only for blocking ones.
 *  False when a strict backend could not store it. */
async function emit(
  auditor: Auditor,
  audit: Pick<RequestAudit, 'config' | 'event'>,
  stage: Stage,
  stageMicros = nowMicros(),
): Promise<boolean> {
  if (audit.config.omitStages.includes(stage)) return true;
  try {
    return (await auditor.backend.processEvents([eventJson(audit.event, stage, stageMicros)])) !== false;
  } catch {
    // a backend's failure is its own to log; the request goes on
    return true;
  }
}

/** kube's metav1.Status fields of the response, when the body was a Status */
function statusOf(body: unknown, code: number | undefined): ResponseStatus {
  const out: ResponseStatus = { code };
  if (body && typeof body === 'object' && (body as { kind?: unknown }).kind === 'Status') {
    const s = body as Record<string, unknown>;
    if (typeof s.status === 'string') out.status = s.status;
    if (typeof s.message === 'string') out.message = s.message;
    if (typeof s.reason === 'string') out.reason = s.reason;
    if (s.details && typeof s.details === 'object') out.details = s.details;
    if (code === undefined && typeof s.code === 'number') out.code = s.code;
  }
  return out;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** the request object as kube-apiserver logs it, and what it tells about the object */
function logRequestObject(state: RequestState, audit: RequestAudit): void {
  const ev = audit.event;
  const contentType = header(state.req, 'content-type') ?? 'application/json';
  let obj = audit.requestTap?.decoded(contentType);
  const verb = state.info.verb;
  if (verb === 'delete' || verb === 'deletecollection') {
    // the DeleteOptions the handler used, in meta.k8s.io/v1
    const given = obj && typeof obj === 'object' && !Array.isArray(obj) ? (obj as Record<string, unknown>) : {};
    const { kind: _k, apiVersion: _v, ...rest } = given;
    obj = { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...rest };
  }
  if (obj === undefined) return;
  if (verb !== 'patch' && obj && typeof obj === 'object' && ev.objectRef) {
    const meta = (obj as { metadata?: Record<string, unknown> }).metadata;
    if (meta && typeof meta === 'object') {
      const ref = ev.objectRef;
      const str = (v: unknown) => (typeof v === 'string' ? v : '');
      ref.namespace ||= str(meta.namespace);
      ref.name ||= str(meta.name);
      ref.uid ||= str(meta.uid);
      ref.resourceVersion ||= str(meta.resourceVersion);
    }
  }
  if (!levelAtLeast(audit.config.level, 'Request')) return;
  ev.requestObject = audit.config.omitManagedFields && verb !== 'patch' ? withoutManagedFields(obj) : obj;
}

function finishResponse(tap: ResponseTap, audit: RequestAudit): void {
  const ev = audit.event;
  const body = tap.decoded();
  ev.responseStatus = statusOf(body, tap.code);
  if (levelAtLeast(audit.config.level, 'RequestResponse') && body !== undefined && !audit.longRunning) {
    ev.responseObject = audit.config.omitManagedFields ? withoutManagedFields(body) : body;
  }
}

/** Before authentication: taps the response, and audits requests that failed authentication. */
export function withAuditCapture(auditor: Auditor | undefined): Filter {
  if (!auditor) return (next) => next;
  return (next) => async (state) => {
    const tap = new ResponseTap();
    installTap(state.res, tap);
    const capture: CaptureState = { tap, remoteAddress: remoteAddress(state.req) };
    captures.set(state, capture);
    await next(state);
    if (capture.audit || state.user !== undefined || tap.code !== 401) return;
    // authentication failed: evaluated without a user, recorded once, when the response started
    const config = auditor.evaluate(policyAttributes(state));
    if (config.level === 'None') return;
    const event = newEvent(state, config);
    event.user = undefined;
    event.responseStatus = statusOf(tap.decoded(), tap.code);
    await emit(auditor, { config, event }, 'ResponseStarted');
  };
}

/** After authentication: the request's event, stage by stage. */
export function withAudit(auditor?: Auditor): Filter {
  if (!auditor) return (next) => next;
  return (next) => async (state) => {
    const capture = captures.get(state);
    const config = auditor.evaluate(policyAttributes(state));
    if (!capture || config.level === 'None') {
      if (capture) capture.tap.wantBody = false;
      await next(state);
      return;
    }
    const longRunning = isLongRunning(state.info);
    const audit: RequestAudit = {
      config,
      event: newEvent(state, config),
      authenticated: state.user,
      longRunning,
      requestTap: BODY_METHODS.has(state.method) ? new RequestTap(state) : undefined,
    };
    capture.audit = audit;
    setAuditAnnotationSink(state, (annotations) => annotate(state, annotations));
    const tap = capture.tap;
    // below RequestResponse only a Status (the error, or a deletion's success) is of interest
    if (longRunning) tap.wantBody = false;
    else if (!levelAtLeast(config.level, 'RequestResponse')) tap.limit = STATUS_SIZED_BYTES;

    if (!(await emit(auditor, audit, 'RequestReceived', audit.event.requestReceivedMicros))) {
      // a blocking-strict backend refused the event: the request is not served unaudited
      tap.wantBody = false;
      // kube-apiserver's InternalError: Go's http.Error, plain text
      const uri = JSON.stringify(state.req.url ?? state.path);
      await writeBody(state, 500, `Internal Server Error: ${uri}: failed to store audit event\n`, 'text/plain; charset=utf-8', {
        compress: false,
        headers: { 'X-Content-Type-Options': 'nosniff' },
      });
      return;
    }
    let startedEmitted: Promise<boolean> | undefined;
    if (longRunning) {
      tap.onHead = (code) => {
        noteImpersonation(state, audit);
        audit.event.responseStatus = { code };
        startedEmitted = emit(auditor, audit, 'ResponseStarted');
      };
    }
    try {
      await next(state);
    } catch (err) {
      noteImpersonation(state, audit);
      logRequestObject(state, audit);
      audit.event.responseStatus = {
        code: 500,
        status: 'Failure',
        reason: 'InternalError',
        message: `APIServer panic'd: ${err instanceof Error ? err.message : String(err)}`,
      };
      await emit(auditor, audit, 'Panic');
      throw err;
    }
    await startedEmitted;
    noteImpersonation(state, audit);
    logRequestObject(state, audit);
    if (tap.code === undefined) {
      // nothing was written: the client went away first
      audit.event.responseStatus = { code: 200, status: 'Success', message: 'Connection closed early' };
      if (longRunning) await emit(auditor, audit, 'ResponseStarted');
    } else if (!longRunning) {
      finishResponse(tap, audit);
    }
    await emit(auditor, audit, 'ResponseComplete');
  };
}

function noteImpersonation(state: RequestState, audit: RequestAudit): void {
  // impersonation puts a new user object in place of the authenticated one
  if (audit.event.impersonatedUser || !state.user || state.user === audit.authenticated) return;
  audit.event.impersonatedUser = state.user;
}

const DECISION = 'authorization.k8s.io/decision';
const REASON = 'authorization.k8s.io/reason';

/** Wraps the authorization filter so that its decision lands in the request's event. */
export function withAuthorizationAudit(
  authorizer: Authorizer,
  auditor: Auditor | undefined,
  authorization: (a: Authorizer) => Filter,
): Filter {
  const plain = authorization(authorizer);
  if (!auditor) return plain;
  return (next) => {
    const unaudited = plain(next);
    return async (state) => {
      const audit = captures.get(state)?.audit;
      if (!audit) return unaudited(state);
      const recording: Authorizer = {
        authorize: async (attrs) => {
          const result = await authorizer.authorize(attrs);
          const annotations = audit.event.annotations;
          annotations.set(DECISION, result.decision === 'allow' ? 'allow' : 'forbid');
          annotations.set(REASON, result.reason ?? '');
          return result;
        },
      };
      return authorization(recording)(next)(state);
    };
  };
}
