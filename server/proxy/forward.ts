// Plain (not upgraded) HTTP through kapi: pod logs, as kube's LocationStreamer (a GET whose
// body is streamed to the client as text/plain, a backend failure mapped to a Status), and
// the proxy subresources, as kube's reverse proxy (method, headers and body passed on,
// hop-by-hop headers and kapi's own credentials left out, the answer passed back).

import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { StatusError, errors } from '../machinery/status.js';
import { beginStream } from '../request/response.js';
import type { RequestState } from '../request/types.js';
import { HOP_BY_HOP_HEADERS } from '../request/headers.js';
import { dialBackend } from './dial.js';
import type { Backend } from './kubelet-client.js';

/** how much of a failed backend answer becomes the Status message (kube's maxReadLength) */
const MAX_ERROR_BODY_BYTES = 50000;

// HTTP/2 pseudo-headers never go to an HTTP/1.1 backend
const HOP_BY_HOP = new Set([...HOP_BY_HOP_HEADERS, ':method', ':path', ':scheme', ':authority']);

/** a failure that is not a Status in kube either: 500 with the error's text and no reason */
export function unknownFailure(message: string): StatusError {
  return new StatusError(500, '', message);
}

/** request headers for the backend: the client's, minus hop-by-hop and kapi's own credentials */
export function forwardedRequestHeaders(state: RequestState, host: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const connectionListed = new Set(
    String(state.req.headers['connection'] ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase()),
  );
  for (const [name, value] of Object.entries(state.req.headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || connectionListed.has(lower)) continue;
    if (lower === 'authorization' || lower.startsWith('impersonate-') || lower === 'host') continue;
    out[name] = value;
  }
  const remote = (state.req.socket as { remoteAddress?: string } | undefined)?.remoteAddress;
  if (remote) {
    const prior = state.req.headers['x-forwarded-for'];
    out['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${remote}` : remote;
  }
  out['host'] = host;
  return out;
}

/** sends one request to a backend over a freshly dialled connection */
export async function sendToBackend(
  backend: Backend,
  method: string,
  headers: OutgoingHttpHeaders,
  body: AsyncIterable<Buffer | string> | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const socket = await dialBackend(backend);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      method,
      path: backend.url.pathname + backend.url.search,
      headers,
      // the connection is ours (dialled with the backend's TLS and timeout), not an agent's
      createConnection: () => socket,
    });
    const onAbort = (): void => {
      req.destroy();
      socket.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // the client went away while the backend was dialled: no 'abort' is left to come
    if (signal.aborted) onAbort();
    req.once('response', (res) => {
      res.once('close', () => {
        signal.removeEventListener('abort', onAbort);
        socket.destroy();
      });
      resolve(res);
    });
    req.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(err);
    });
    if (!body) {
      req.end();
      return;
    }
    void (async () => {
      try {
        for await (const chunk of body) {
          if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
        }
        req.end();
      } catch (err) {
        req.destroy(err instanceof Error ? err : new Error(String(err)));
      }
    })();
  });
}

async function readLimited(res: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    const room = limit - total;
    if (room <= 0) break;
    chunks.push(chunk.subarray(0, room));
    total += Math.min(chunk.length, room);
  }
  res.destroy();
  return Buffer.concat(chunks).toString('utf8');
}

/** kube's GenericHttpResponseChecker: a backend's failure as the Status the client gets */
export async function backendFailure(res: IncomingMessage, resource: string, name: string): Promise<StatusError> {
  const body = await readLimited(res, MAX_ERROR_BODY_BYTES);
  const code = res.statusCode ?? 500;
  if (code === 500) return errors.internal(body);
  if (code === 400) return errors.badRequest(body);
  return genericServerResponse(code, resource, name, body);
}

/** kube's NewGenericServerResponse for an empty verb */
function genericServerResponse(code: number, resource: string, name: string, serverMessage: string): StatusError {
  const known: Record<number, [StatusError['reason'], string]> = {
    401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
    403: ['Forbidden', 'the server does not allow access to the requested resource'],
    404: ['NotFound', 'the server could not find the requested resource'],
    405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    409: ['Conflict', 'the server reported a conflict'],
    422: ['Invalid', 'the server rejected our request due to an error in our request'],
    429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
    503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
    504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
  };
  let [reason, message] = known[code] ?? ['', `the server responded with the status code ${code} but did not return more information`];
  if (!known[code] && code >= 500) {
    reason = 'InternalError';
    message = `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
  }
  message = `${message} ( ${resource} ${name})`;
  const causes = serverMessage ? [{ reason: 'UnexpectedServerResponse', message: serverMessage }] : undefined;
  return new StatusError(code, reason, message, { kind: resource, name, causes });
}

/**
 * GETs a log from the kubelet and streams it to the client as text/plain; a backend that
 * cannot be reached is kube's 500 naming the URL, a backend error its mapped Status.
 */
export async function streamLog(state: RequestState, backend: Backend, name: string): Promise<void> {
  let res: IncomingMessage;
  try {
    res = await sendToBackend(backend, 'GET', { host: backend.url.host }, undefined, state.signal);
  } catch (err) {
    throw unknownFailure(`Get "${backend.url.href}": ${err instanceof Error ? err.message : String(err)}`);
  }
  const code = res.statusCode ?? 500;
  if (code < 200 || code > 206) throw await backendFailure(res, 'pods/log', name);
  beginStream(state, 200, 'text/plain');
  await pipeBody(res, state);
}

/** copies a backend body to the client with backpressure; ends the response either way */
export async function pipeBody(res: IncomingMessage, state: RequestState): Promise<void> {
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      if (state.signal.aborted) break;
      if (!state.res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            state.res.off('drain', done);
            state.res.off('close', done);
            resolve();
          };
          state.res.once('drain', done);
          state.res.once('close', done);
        });
      }
    }
  } catch {
    // the backend went away mid-body: what was sent stays sent
  } finally {
    res.destroy();
    if (!state.res.writableEnded) state.res.end();
  }
}

/** passes a proxied answer back: status, end-to-end headers, body */
export async function relayResponse(res: IncomingMessage, state: RequestState): Promise<void> {
  const connectionListed = new Set(
    String(res.headers['connection'] ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase()),
  );
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || connectionListed.has(name)) continue;
    state.res.setHeader(name, value);
  }
  state.res.writeHead(res.statusCode ?? 502);
  state.res.flushHeaders();
  await pipeBody(res, state);
}
