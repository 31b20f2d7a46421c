// Writing responses: objects in the negotiated format, Status errors, raw bodies; gzip for
// large bodies and `Warning` headers, the way kube-apiserver's response writers do it.

import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { encodeJson, encodeYaml, goEscape } from './encode.js';
import { JSON_MEDIA_TYPE, negotiateOutput, statusRestrictions, type OutputMediaType } from './negotiation.js';
import { protobufBody } from '../protobuf/http.js';
import { encodeCbor } from '../cbor/index.js';
import { goParseBool } from './query.js';
import { StatusError, toStatusError, type ResourceRef } from '../machinery/status.js';
import { isAbortError } from './cancellation.js';
import { header, type HttpResponse, type RequestState } from './types.js';
import { unreadResponseBudget, type BookedBody } from './unread-budget.js';
import { truncatedWarning, warningsTruncated } from '../machinery/warnings.js';

const gzip = promisify(gzipCallback);

/** kube-apiserver compresses a response body only from this size on */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;
/** BestSpeed, as kube-apiserver */
const GZIP_LEVEL = 1;

export function acceptsGzip(state: RequestState): boolean {
  const v = header(state.req, 'accept-encoding');
  if (!v) return false;
  return v.split(',').some((part) => part.split(';')[0].trim().toLowerCase() === 'gzip');
}

/** pretty JSON: `pretty=<bool>` when given, else for browsers and curl/wget as kube-apiserver */
export function wantsPretty(state: RequestState, media?: OutputMediaType): boolean {
  if (media?.pretty) return true;
  const p = state.query.get('pretty');
  if (p) return goParseBool(p) ?? false;
  const ua = header(state.req, 'user-agent') ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

/** the response is the object itself as compact JSON (what a stored text can be edited into) */
export function isCompactJson(state: RequestState, media: OutputMediaType): boolean {
  return media.format === 'json' && !media.convert && !wantsPretty(state, media);
}

/** RFC 7234 warn-code 299, agent `-`, quoted text */
export function warningHeaderValue(text: string): string {
  let quoted = '"';
  for (const ch of text) {
    if (ch === '"' || ch === '\\') quoted += '\\' + ch;
    else if (ch < ' ' || ch === '\x7f') quoted += ' ';
    else quoted += ch;
  }
  return `299 - ${quoted}"`;
}

/** Header values are bytes: non-Latin-1 text goes out as its UTF-8 bytes (what Go sends). */
function headerSafe(state: RequestState, value: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  if (state.req.httpVersion.startsWith('2')) return value;
  return Buffer.from(value, 'utf8').toString('latin1');
}

export function applyWarnings(state: RequestState): void {
  if (state.warnings.length === 0 || state.res.headersSent) return;
  // past kube's total every text is cut (the recorder stopped taking them soon after)
  const cut = warningsTruncated(state.warnings);
  const seen = new Set<string>();
  const values: string[] = [];
  for (const w of state.warnings) {
    if (!w || seen.has(w)) continue;
    seen.add(w);
    values.push(headerSafe(state, warningHeaderValue(cut ? truncatedWarning(w) : w)));
  }
  if (values.length > 0) state.res.setHeader('Warning', values);
}

export interface WriteOptions {
  /** compress bodies over the threshold when the client accepts gzip (default true) */
  compress?: boolean;
  headers?: Record<string, string>;
  /** what producing the body booked: released once the body is encoded (it is then booked
   *  as held while the client takes it) */
  producing?: BookedBody;
  /** writeObject: the object's JSON.stringify, known already (a write's stored text) */
  json?: string;
}

/** Writes a complete body. HEAD requests get the headers only. */
export async function writeBody(
  state: RequestState,
  code: number,
  body: string | Buffer,
  contentType: string,
  opts: WriteOptions = {},
): Promise<void> {
  const res = state.res;
  if (res.headersSent || res.writableEnded || res.destroyed) {
    opts.producing?.release();
    return;
  }
  let buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const headers: Record<string, string> = { 'Content-Type': contentType, ...(opts.headers ?? {}) };
  if ((opts.compress ?? state.compressResponses ?? true) && buf.length >= GZIP_THRESHOLD_BYTES && acceptsGzip(state)) {
    buf = await gzip(buf, { level: GZIP_LEVEL });
    headers['Content-Encoding'] = 'gzip';
    headers['Vary'] = 'Accept-Encoding';
  }
  opts.producing?.release();
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  headers['Content-Length'] = String(buf.length);
  applyWarnings(state);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.writeHead(code);
  if (state.method === 'HEAD') res.end();
  else await sendBody(state, buf);
}

/** bodies from this size on are booked in the replica's budget for unread responses */
export const BOOKED_BODY_BYTES = 64 * 1024;

/**
 * Writes a body and resolves once the client has taken all of it (or the response is gone):
 * the request counts as in flight, holds its seat and stays under its deadline until then. A
 * large body is booked in the replica's budget for unread responses while it waits; over
 * HTTP/1.1 it counts twice, since TLS holds an encrypted copy of what the socket has not taken
 * (HTTP/2 encrypts only what the client's flow-control window lets out).
 */
async function sendBody(state: RequestState, body: Buffer): Promise<void> {
  const res = state.res;
  const done = responseDone(res);
  if (body.length < BOOKED_BODY_BYTES) {
    res.end(body);
    await done;
    return;
  }
  const held = state.req.httpVersion.startsWith('1.') ? 2 * body.length : body.length;
  const booking = unreadResponseBudget().book(held, () => {
    res.destroy();
  });
  try {
    res.end(body);
    await done;
  } finally {
    booking.release();
  }
}

/** resolves once the response is fully written or closed */
export function responseDone(res: HttpResponse): Promise<void> {
  if (res.writableFinished || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const settle = (): void => {
      res.off('finish', settle);
      res.off('close', settle);
      resolve();
    };
    res.once('finish', settle);
    res.once('close', settle);
  });
}

/** Encodes an object in the negotiated media type and writes it. */
export async function writeObject(
  state: RequestState,
  code: number,
  obj: unknown,
  media: OutputMediaType,
  opts: WriteOptions = {},
): Promise<void> {
  if (media.format === 'protobuf') {
    const body = protobufBody(obj);
    if (body) {
      await writeBody(state, code, body, media.contentType, opts);
      return;
    }
    // an object without a protobuf form (client-go decodes by the response Content-Type)
    media = { format: 'json', contentType: JSON_MEDIA_TYPE, pretty: false };
  }
  if (media.format === 'cbor') {
    await writeBody(state, code, encodeCbor(obj), media.contentType, opts);
    return;
  }
  const body =
    media.format === 'yaml'
      ? encodeYaml(obj)
      : opts.json !== undefined && isCompactJson(state, media)
        ? `${goEscape(opts.json)}\n`
        : encodeJson(obj, wantsPretty(state, media));
  await writeBody(state, code, body, media.contentType, opts);
}

/** kube-apiserver's WriteRawJSON: indented JSON without a trailing newline */
export async function writeRawJson(state: RequestState, code: number, obj: unknown): Promise<void> {
  await writeBody(state, code, JSON.stringify(obj, null, 2), 'application/json');
}

/** Writes an error as a Status, in the media type the client accepts (JSON if none fits). */
export async function writeError(state: RequestState, err: unknown, ref?: ResourceRef): Promise<void> {
  await writeStatusError(state, cancellationAnswer(state, err) ?? toStatusError(err, ref));
}

/** work its request's cancellation cut short answers what the cancellation was given, when
 *  that is an answer (a client that ended its side: kube-apiserver's 504 for a cancelled
 *  context), not the abort's own error */
function cancellationAnswer(state: RequestState, err: unknown): StatusError | undefined {
  const c = state.cancellation;
  if (!c.cancelled || !(c.reason instanceof StatusError) || err instanceof StatusError) return undefined;
  return isAbortError(err, c.reason) ? c.reason : undefined;
}

export async function writeStatusError(state: RequestState, status: StatusError): Promise<void> {
  let media: OutputMediaType;
  try {
    media = negotiateOutput(header(state.req, 'accept'), state.cbor ? { ...statusRestrictions, cbor: true } : statusRestrictions);
  } catch (negotiationError) {
    await writeRawJson(state, 406, toStatusError(negotiationError).toStatus());
    return;
  }
  if (status.code === 406 && media.format === 'protobuf') {
    // the endpoint refused protobuf (a kind without a protobuf form); kube-apiserver's second
    // negotiation for the error fails the same way and ends in raw JSON
    await writeRawJson(state, 406, status.toStatus());
    return;
  }
  await writeObject(state, status.code, status.toStatus(), media, { headers: status.headers });
}

/** true when nothing more can be written to this response */
export function responseFinished(res: HttpResponse): boolean {
  return res.writableEnded || res.destroyed === true;
}

/** Starts a streamed response (watch): status and headers go out at once, the body follows
 *  chunk by chunk (chunked transfer encoding on HTTP/1.1, DATA frames on HTTP/2). */
export function beginStream(state: RequestState, code: number, contentType: string): void {
  const res = state.res;
  applyWarnings(state);
  res.setHeader('Content-Type', contentType);
  res.writeHead(code);
  res.flushHeaders();
}
