// Forwards a request for an aggregated group version to its server, as kube-aggregator's
// proxy handler does: after authentication and authorization at the front, to a ready
// endpoint of the APIService's Service, with the path as sent and the query re-encoded, the
// caller's identity in X-Remote-* headers (any such headers from the client are dropped, as
// are its credentials) over kapi's front-proxy client certificate. Request and response
// bodies stream both ways with backpressure (watches included), so nothing is buffered
// beyond a chunk. Failures before the answer starts are kube's plain-text 503s.

import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';
import type { RequestState } from '../request/types.js';
import { isAvailable, type APIServiceView } from './api-services.js';
import { authProxyHeaders, describeNetworkError, type BackendAgents } from './backend-client.js';
import { authority, resolveServiceEndpoint } from './service-endpoint.js';
import { header } from '../request/types.js';
import { HOP_BY_HOP_HEADERS } from '../request/headers.js';
import { openUpgrade, splice } from '../proxy/upgrade.js';

/** the connection to the backend must be made within this (kube's proxy dialer: 30 s) */
const CONNECT_TIMEOUT_MS = 30_000;

/** never forwarded: hop-by-hop headers, HTTP/2 pseudo-headers, the client's credentials and
 *  identity claims (the front has already turned them into the user it forwards) */
const HOP_BY_HOP = new Set([...HOP_BY_HOP_HEADERS, 'host', 'http2-settings']);

function forwardedRequestHeader(name: string): boolean {
  if (name.startsWith(':') || HOP_BY_HOP.has(name)) return false;
  if (name === 'authorization' || name.startsWith('impersonate-')) return false;
  if (name === 'x-remote-user' || name === 'x-remote-uid' || name === 'x-remote-group' || name.startsWith('x-remote-extra-')) return false;
  return true;
}

function forwardedResponseHeader(name: string): boolean {
  return !name.startsWith(':') && !HOP_BY_HOP.has(name);
}

/** Go's http.Error: the text and a newline, plain text, no sniffing */
export function writePlainError(state: RequestState, code: number, text: string): void {
  const { res } = state;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.writeHead(code);
  res.end(`${text}\n`);
}

/** the path as the client sent it (not decoded), and the query as Go's Values.Encode writes it */
function targetPath(state: RequestState): string {
  const raw = state.req.url ?? state.path;
  const q = raw.indexOf('?');
  const path = q >= 0 ? raw.slice(0, q) : raw;
  const entries = [...state.query.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const query = new URLSearchParams(entries).toString();
  return query ? `${path}?${query}` : path;
}

function remoteAddressOf(state: RequestState): string | undefined {
  const socket = state.req.socket as { remoteAddress?: string } | undefined;
  return socket?.remoteAddress;
}

function outgoingHeaders(state: RequestState): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const incoming: IncomingHttpHeaders = state.req.headers;
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || !forwardedRequestHeader(name)) continue;
    out[name] = value;
  }
  // httputil.ReverseProxy appends the client's address
  const client = remoteAddressOf(state);
  if (client) {
    const prior = incoming['x-forwarded-for'];
    out['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${client}` : client;
  }
  const user = state.user!;
  Object.assign(out, authProxyHeaders(user.username, user.groups, user.extra));
  return out;
}

function waitForDrainOrClose(state: RequestState): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      state.res.off('drain', done);
      state.res.off('close', done);
      resolve();
    };
    state.res.once('drain', done);
    state.res.once('close', done);
  });
}

async function relayResponse(state: RequestState, upstream: IncomingMessage): Promise<void> {
  const { res } = state;
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (value === undefined || !forwardedResponseHeader(name)) continue;
    res.setHeader(name, value);
  }
  res.writeHead(upstream.statusCode ?? 502);
  // a watch shows its first event at once: the headers are not held back until a body chunk
  res.flushHeaders();
  for await (const chunk of upstream) {
    if (res.destroyed || res.writableEnded) break;
    if (!res.write(chunk as Buffer)) await waitForDrainOrClose(state);
  }
  if (!res.writableEnded && !res.destroyed) res.end();
}

async function pumpRequestBody(state: RequestState, upstream: ReturnType<typeof https.request>): Promise<void> {
  if (state.method === 'GET' || state.method === 'HEAD') {
    upstream.end();
    return;
  }
  for await (const chunk of state.req) {
    if (upstream.destroyed) return;
    state.bodyObserver?.(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if (!upstream.write(chunk)) await new Promise<void>((r) => upstream.once('drain', r).once('close', r));
  }
  upstream.end();
}

export interface ProxyDeps {
  resolver: ResourceResolver;
  agents: BackendAgents;
  log: Logger;
}

function isUpgradeRequest(state: RequestState): boolean {
  const connection = (header(state.req, 'connection') ?? '').toLowerCase();
  return (
    state.upgrade !== undefined && connection.split(',').some((t) => t.trim() === 'upgrade') && (header(state.req, 'upgrade') ?? '') !== ''
  );
}

/** an upgrade (SPDY, WebSocket) passes through as kube's UpgradeAwareHandler passes it: the
 *  request with the front-proxy headers and the upgrade headers kept, the backend's answer
 *  byte for byte, then the two connections joined */
async function passUpgradeThrough(state: RequestState, api: APIServiceView, deps: ProxyDeps, host: string, port: number): Promise<void> {
  const upgrade = state.upgrade!;
  const headers = outgoingHeaders(state);
  headers['Connection'] = 'Upgrade';
  headers['Upgrade'] = header(state.req, 'upgrade') ?? '';
  const url = new URL(`https://${authority(host, port)}`);
  const target = targetPath(state);
  const q = target.indexOf('?');
  url.pathname = q >= 0 ? target.slice(0, q) : target;
  url.search = q >= 0 ? target.slice(q) : '';
  let opened;
  try {
    opened = await openUpgrade(
      { url, tls: deps.agents.tlsFor(api), connectTimeoutMs: CONNECT_TIMEOUT_MS },
      { method: state.method, headers },
    );
  } catch (err) {
    writePlainError(state, 503, err instanceof Error ? err.message : String(err));
    return;
  }
  const { backend, head } = opened;
  upgrade.socket.write(head.raw);
  if (head.rest.length > 0) upgrade.socket.write(head.rest);
  if (upgrade.head.length > 0) backend.write(upgrade.head);
  await splice(backend, upgrade.socket);
}

/** serves one request for `api`'s group version from its backend */
export async function proxyToAPIService(state: RequestState, api: APIServiceView, deps: ProxyDeps): Promise<void> {
  if (!isAvailable(api) || !api.service) {
    writePlainError(state, 503, 'service unavailable');
    return;
  }
  if (!state.user) {
    writePlainError(state, 500, 'missing user');
    return;
  }
  const endpoint = await resolveServiceEndpoint(deps.resolver, api.service);
  if (!endpoint.ok) {
    deps.log.v(1).info('no endpoint for an aggregated API', { apiservice: api.name, reason: endpoint.reason, message: endpoint.message });
    writePlainError(state, 503, 'service unavailable');
    return;
  }
  if (isUpgradeRequest(state)) {
    await passUpgradeThrough(state, api, deps, endpoint.host, endpoint.port);
    return;
  }
  const hostPort = authority(endpoint.host, endpoint.port);
  const upstream = https.request({
    host: endpoint.host,
    port: endpoint.port,
    method: state.method,
    path: targetPath(state),
    headers: outgoingHeaders(state),
    agent: deps.agents.agentFor(api),
  });
  const abortUpstream = (): void => {
    upstream.destroy();
  };
  state.signal.addEventListener('abort', abortUpstream, { once: true });
  // the client went away while the endpoint was resolved: no 'abort' is left to come
  if (state.signal.aborted) abortUpstream();
  // errors after the answer has begun end the relay below; they must not go unhandled
  upstream.on('error', () => undefined);
  const connectTimer = setTimeout(
    () => upstream.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })),
    CONNECT_TIMEOUT_MS,
  );
  upstream.once('socket', (socket) => {
    if (!socket.connecting) clearTimeout(connectTimer);
    else socket.once('connect', () => clearTimeout(connectTimer));
  });
  try {
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      upstream.once('response', resolve);
      upstream.once('error', reject);
    });
    const sending = pumpRequestBody(state, upstream).catch((err: unknown) => upstream.destroy(err as Error));
    let answer: IncomingMessage;
    try {
      answer = await response;
    } catch (err) {
      if (state.signal.aborted) return;
      const why = describeNetworkError(err as NodeJS.ErrnoException, hostPort);
      deps.log.v(1).info('proxying to an aggregated API failed', { apiservice: api.name, error: why });
      writePlainError(state, 503, why);
      return;
    } finally {
      clearTimeout(connectTimer);
    }
    answer.on('error', () => undefined);
    await relayResponse(state, answer).catch(() => state.res.destroy());
    await sending;
  } finally {
    clearTimeout(connectTimer);
    state.signal.removeEventListener('abort', abortUpstream);
    if (!upstream.destroyed && upstream.writableEnded === false) upstream.destroy();
  }
}
