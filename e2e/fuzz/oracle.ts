// Judges one answer: a 4xx must be kube's Status with the reason kube gives for that code, a
// 2xx is fine unless the input is one kube always refuses, and anything else (5xx, 3xx, a
// dropped connection, no answer) is a failure.

import { parse as parseYaml } from 'yaml';
import { decodeStoredCbor } from '../../server/cbor/index.js';
import { isTransportError, type FuzzOutcome, type FuzzRequest } from './request.js';

/** the reasons kube-apiserver gives with each 4xx code (metav1.StatusReason) */
const REASONS_BY_CODE: ReadonlyMap<number, readonly string[]> = new Map([
  [400, ['BadRequest']],
  [401, ['Unauthorized']],
  [403, ['Forbidden']],
  [404, ['NotFound']],
  [405, ['MethodNotAllowed']],
  [406, ['NotAcceptable']],
  [409, ['Conflict', 'AlreadyExists']],
  [410, ['Expired', 'Gone']],
  [413, ['RequestEntityTooLarge']],
  [415, ['UnsupportedMediaType']],
  [422, ['Invalid']],
  [429, ['TooManyRequests']],
]);

/**
 * 5xx and bare answers kube-apiserver itself gives for client input, which kapi gives the same
 * way on purpose: the impersonation filter's InternalError for groups, uid or extra without a
 * user; the storage's plain 500 for a create that carries a resourceVersion; the plain errors (500, no reason) of the patch appliers and server-side apply; the 504
 * for a resourceVersion newer than etcd's; Go's bare "400 Bad Request" for a path with a
 * malformed percent escape.
 */
function kubeParity(req: FuzzRequest, status: number, text: string): boolean {
  if (status === 500 && /InternalError/.test(text) && /without impersonating a user/.test(text)) return true;
  if (status === 500 && req.method === 'PATCH' && /failed to create typed patch object \(/.test(text)) return true;
  if (
    status === 500 &&
    req.method === 'POST' &&
    /"message":"resourceVersion should not be set on objects to be created","code":500/.test(text)
  )
    return true;
  if (
    status === 500 &&
    req.method === 'PATCH' &&
    /^\{"kind":"Status","apiVersion":"v1","metadata":\{\},"status":"Failure","message":"[\s\S]*","code":500\}\s*$/.test(text)
  )
    return true;
  // a resourceVersion newer than etcd's, waited for and not reached (JSON or protobuf Status)
  if (status === 504 && /Too large resource version/.test(text)) return true;
  // a client's own ?timeout= that runs out is kube's 504 Timeout too
  if (status === 504 && /[?&]timeout=/.test(req.path) && /"reason":\s*"Timeout"/.test(text)) return true;
  // the YAML form of the same (kube's ErrorToAPIStatus: code 500, no reason, the error's text)
  if (
    status === 500 &&
    req.method === 'PATCH' &&
    /^kind: Status$/m.test(text) &&
    /^status: Failure$/m.test(text) &&
    !/^reason:/m.test(text)
  )
    return true;
  // the protobuf and CBOR forms of the strategic merge patch's plain errors (a Status without a reason)
  const binary = text.startsWith('k8s\0') || text.startsWith('\xd9\xd9\xf7');
  if (status === 500 && req.method === 'PATCH' && binary && text.includes('Failure') && !text.includes('InternalError')) return true;
  if (status === 400 && text === '400 Bad Request' && /%(?![0-9a-fA-F]{2})/.test(req.path.split('?')[0]!)) return true;
  return false;
}

/** the most bytes one header field (name, value, 32 of overhead) may take in node's HPACK decoder */
const NODE_HPACK_MAX_FIELD_BYTES = 65536;

/**
 * Node's HTTP/2 server (nghttp2) ends the session with COMPRESSION_ERROR when one header field
 * (`:path` included) is 64 KiB or more, where Go would take it (within 1 MiB in all); kapi
 * cannot change that from JavaScript, and README lists it among the departures.
 */
function beyondNodeHpackFieldLimit(req: FuzzRequest, error: string): boolean {
  if (req.protocol !== 'h2' || !/error code 9\b/.test(error)) return false;
  const fields: Array<[string, string]> = [[':path', req.path], ...Object.entries(req.headers)];
  return fields.some(([name, value]) => Buffer.byteLength(name) + Buffer.byteLength(value) + 32 >= NODE_HPACK_MAX_FIELD_BYTES);
}

const PROTOBUF_MAGIC = Buffer.from('k8s\0');

export interface Verdict {
  ok: boolean;
  /** why not, short enough to group failures by (no object names or numbers from the input) */
  problem?: string;
  /** the status line and the start of the body, for the report */
  answer: string;
}

/** a transport failure, grouped without the numbers in its message */
function noAnswer(error: string): Verdict {
  return { ok: false, problem: `no answer: ${error.replace(/\d+/g, 'N')}`, answer: error };
}

/** Go's own answers to framing it does not support: not server errors */
const PROTOCOL_ANSWERS =
  /^HTTP\/1\.1 (?:505 HTTP Version Not Supported\r\n[\s\S]*unsupported protocol version|501 Not Implemented\r\n[\s\S]*Unsupported transfer encoding)/;

/** kube-apiserver's answer to work cut short by its client's end: every raw exchange ends its
 *  side after its bytes, Go's server cancels the request's context there, and a write whose
 *  context is done answers this 504 (finishRequest) */
const CANCELLED_CONTEXT = /^HTTP\/1\.1 504 [^\r]*\r\n[\s\S]*?Timeout: request did not complete within requested timeout - context canceled/;

/**
 * Raw framing: whatever the replica answers or however it closes is its choice (Go answers a
 * bare 400, its 501 or 505, or just closes), but it must end the exchange in time and no other
 * HTTP/1.1 answer on the connection may be a server error.
 */
function judgeRaw(req: FuzzRequest, outcome: FuzzOutcome): Verdict {
  if (isTransportError(outcome)) return noAnswer(outcome.error);
  const text = outcome.body.toString('latin1');
  const answer = text.slice(0, 600);
  if (req.protocol === 'raw-http/1.1') {
    const serverError = /(?:^|\r\n)HTTP\/1\.1 (5\d\d) /.exec(text);
    const from = serverError ? text.slice(serverError.index).replace(/^\r\n/, '') : '';
    if (serverError && !PROTOCOL_ANSWERS.test(from) && !CANCELLED_CONTEXT.test(from))
      return { ok: false, problem: `server error ${serverError[1]}`, answer };
  }
  return { ok: true, answer };
}

export function judge(req: FuzzRequest, outcome: FuzzOutcome): Verdict {
  if (req.raw) return judgeRaw(req, outcome);
  if (isTransportError(outcome)) {
    if (beyondNodeHpackFieldLimit(req, outcome.error)) return { ok: true, answer: outcome.error };
    return noAnswer(outcome.error);
  }
  const { status, body, headers } = outcome;
  const answer = `${status} ${body.subarray(0, 600).toString('utf8')}`;
  // the client itself would not send it: nothing reached the server
  if (status === 0) return { ok: true, answer };
  if (status >= 200 && status < 300) {
    return req.mustFail ? { ok: false, problem: `accepted input kube refuses (${status})`, answer } : { ok: true, answer };
  }
  if (kubeParity(req, status, body.toString('latin1'))) return { ok: true, answer };
  if (status >= 500) return { ok: false, problem: `server error ${status}`, answer };
  if (status < 400) return { ok: false, problem: `unexpected ${status}`, answer };
  const reasons = REASONS_BY_CODE.get(status);
  if (!reasons) return { ok: false, problem: `4xx code kube does not give here: ${status}`, answer };
  // a HEAD answer has no body to judge
  if (outcome.truncated || req.method === 'HEAD') return { ok: true, answer };
  const contentType = String(headers['content-type'] ?? '');
  if (contentType.startsWith('application/vnd.kubernetes.protobuf')) {
    if (!body.subarray(0, 4).equals(PROTOBUF_MAGIC))
      return { ok: false, problem: `${status} protobuf body without the k8s envelope`, answer };
    const text = body.toString('latin1');
    if (!text.includes('Status') || !reasons.some((r) => text.includes(r))) {
      return { ok: false, problem: `${status} protobuf Status without reason ${reasons.join('/')}`, answer };
    }
    return { ok: true, answer };
  }
  let parsed: unknown;
  try {
    // an answer is bounded by what the server made, not by the limits kube puts on what a
    // client sends: a Status for a body of thousands of bad labels has as many causes
    if (contentType.startsWith('application/cbor')) parsed = decodeStoredCbor(body);
    else parsed = contentType.startsWith('application/yaml') ? parseYaml(body.toString('utf8')) : JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, problem: `${status} body is not a Status (content-type ${contentType || 'none'})`, answer };
  }
  const s = parsed as { kind?: unknown; apiVersion?: unknown; status?: unknown; code?: unknown; reason?: unknown };
  if (s.kind !== 'Status' || s.apiVersion !== 'v1') return { ok: false, problem: `${status} body is not a v1 Status`, answer };
  if (s.status !== 'Failure') return { ok: false, problem: `${status} Status.status is not Failure`, answer };
  if (s.code !== status) return { ok: false, problem: `${status} Status.code differs from the HTTP code`, answer };
  if (typeof s.reason !== 'string' || !reasons.includes(s.reason)) {
    return { ok: false, problem: `${status} with reason ${JSON.stringify(s.reason)} (kube: ${reasons.join('/')})`, answer };
  }
  return { ok: true, answer };
}
