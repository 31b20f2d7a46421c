// The connect subresources of the core group, as kube-apiserver serves them:
//   pods/log (GET)                         -> the kubelet's /containerLogs, streamed
//   pods/exec, pods/attach (GET, POST)     -> the kubelet's /exec, /attach, upgraded
//   pods/portforward (GET, POST)           -> the kubelet's /portForward, upgraded
//   pods/proxy, nodes/proxy, services/proxy -> the pod, node or endpoint, HTTP or upgraded
// Authorization has run already (by the verb the method gives). A v5 WebSocket exec/attach is
// translated to SPDY, a tunnelled SPDY port-forward is untunnelled, everything else that
// upgrades passes through to the backend byte for byte.

import type { Duplex } from 'node:stream';
import { StorageError } from '../../storage/errors.js';
import { errors, StatusError, toStatusError } from '../machinery/status.js';
import { writeError } from '../request/response.js';
import { header, type RequestState, type UpgradeSocket } from '../request/types.js';
import type { RequestContext, ResourceResolver } from '../registry/rest.js';
import { isWebSocketRequest, offeredProtocols } from '../streaming/websocket.js';
import { CHANNEL_V5 } from './channels.js';
import { translateToSpdy } from './exec-translator.js';
import { relayResponse, sendToBackend, forwardedRequestHeaders, streamLog, unknownFailure } from './forward.js';
import type { Backend, KubeletClient } from './kubelet-client.js';
import {
  containerFor,
  getObject,
  joinPreservingTrailingSlash,
  nodeNameOf,
  nodeProxyLocation,
  podProxyLocation,
  serviceProxyLocation,
  type Lookup,
} from './locations.js';
import { kubeletLogQuery, kubeletStreamQuery, readLogOptions, readPorts, readStreamOptions, validateLogOptions } from './options.js';
import { tunnelPortForward, tunneledProtocols } from './portforward-tunnel.js';
import { openUpgrade, splice } from './upgrade.js';

export interface ConnectDeps {
  resolver: ResourceResolver;
  kubelet: KubeletClient;
  /** --allow-loopback-proxy-targets */
  allowLoopback?: boolean;
}

const STREAM_METHODS = new Set(['GET', 'POST']);
const PROXY_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const SERVED = new Set(['pods/log', 'pods/exec', 'pods/attach', 'pods/portforward', 'pods/proxy', 'nodes/proxy', 'services/proxy']);

function isUpgradeRequest(state: RequestState): boolean {
  const connection = (header(state.req, 'connection') ?? '').toLowerCase();
  return (
    state.upgrade !== undefined && connection.split(',').some((t) => t.trim() === 'upgrade') && (header(state.req, 'upgrade') ?? '') !== ''
  );
}

function contextOf(state: RequestState): RequestContext {
  return {
    user: state.user ?? { username: 'system:anonymous', groups: ['system:unauthenticated'] },
    namespace: state.info.namespace,
    dryRun: false,
    fieldValidation: 'Ignore',
    warnings: [],
    cancellation: state,
  };
}

function rawQuery(state: RequestState): string {
  const url = state.req.url ?? '';
  const at = url.indexOf('?');
  return at >= 0 ? url.slice(at) : '';
}

function headersOf(state: RequestState): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(state.req.headers)) if (v !== undefined) out[k] = v;
  return out;
}

function remoteAddressOf(state: RequestState): string | undefined {
  return (state.req.socket as { remoteAddress?: string } | undefined)?.remoteAddress;
}

/** hands an upgrade to the backend and splices the connections once it answers */
async function passUpgradeThrough(state: RequestState, upgrade: UpgradeSocket, backend: Backend, method = state.method): Promise<void> {
  const { backend: conn, head } = await openUpgrade(backend, { method, headers: headersOf(state) }, remoteAddressOf(state));
  upgrade.socket.write(head.raw);
  if (head.rest.length > 0) upgrade.socket.write(head.rest);
  if (upgrade.head.length > 0) conn.write(upgrade.head);
  await splice(conn, upgrade.socket);
}

/** the kubelet backend of a pod's node, or kube's errors for an unscheduled pod or a lost node */
async function kubeletFor(
  deps: ConnectDeps,
  ctx: RequestContext,
  podName: string,
  nodeName: string,
  path: string,
  query: URLSearchParams,
): Promise<Backend> {
  if (nodeName === '') throw errors.badRequest(`pod ${podName} does not have a host assigned`);
  try {
    return deps.kubelet.backend(await deps.kubelet.connectionInfo(ctx, nodeName), path, query);
  } catch (err) {
    throw asStatus(err, 'nodes', nodeName);
  }
}

async function serveLog(state: RequestState, deps: ConnectDeps, lookup: Lookup): Promise<void> {
  const info = state.info;
  const opts = readLogOptions(state.query);
  validateLogOptions(opts, info.name);
  const pod = await getObject(lookup, 'pods', info.name, info.namespace);
  const container = containerFor(pod, opts.container);
  const nodeName = nodeNameOf(pod);
  if (nodeName === '') {
    // kube has no location for an unscheduled pod: an empty answer
    state.res.writeHead(204);
    state.res.end();
    return;
  }
  const backend = await kubeletFor(
    deps,
    lookup.ctx,
    info.name,
    nodeName,
    `/containerLogs/${info.namespace}/${info.name}/${container}`,
    kubeletLogQuery(opts),
  );
  if (opts.insecureSkipTLSVerifyBackend) backend.tls = deps.kubelet.tls(true);
  await streamLog(state, backend, info.name);
}

async function serveStream(state: RequestState, deps: ConnectDeps, lookup: Lookup, kind: 'exec' | 'attach'): Promise<void> {
  const info = state.info;
  const opts = readStreamOptions(state.query);
  const pod = await getObject(lookup, 'pods', info.name, info.namespace);
  const container = containerFor(pod, opts.container);
  const backend = await kubeletFor(
    deps,
    lookup.ctx,
    info.name,
    nodeNameOf(pod),
    `/${kind}/${info.namespace}/${info.name}/${container}`,
    kubeletStreamQuery(opts, kind === 'exec'),
  );
  const upgrade = state.upgrade;
  if (!upgrade || !isUpgradeRequest(state)) throw errors.badRequest('Upgrade request required');
  const key = header(state.req, 'sec-websocket-key');
  if (isWebSocketRequest(state.req.headers) && key && offeredProtocols(state.req.headers).includes(CHANNEL_V5)) {
    await translateToSpdy({ socket: upgrade.socket, head: upgrade.head, key, headers: headersOf(state) }, backend, opts, state.signal);
    return;
  }
  await passUpgradeThrough(state, upgrade, backend);
}

async function servePortForward(state: RequestState, deps: ConnectDeps, lookup: Lookup): Promise<void> {
  const info = state.info;
  const ports = readPorts(state.query);
  const pod = await getObject(lookup, 'pods', info.name, info.namespace);
  const query = new URLSearchParams();
  if (ports.length > 0) query.set('port', ports.join(','));
  const backend = await kubeletFor(deps, lookup.ctx, info.name, nodeNameOf(pod), `/portForward/${info.namespace}/${info.name}`, query);
  const upgrade = state.upgrade;
  if (!upgrade || !isUpgradeRequest(state)) throw errors.badRequest('Upgrade request required');
  const key = header(state.req, 'sec-websocket-key');
  if (isWebSocketRequest(state.req.headers) && key) {
    const offered = offeredProtocols(state.req.headers);
    if (offered.some((p) => p.startsWith('SPDY/3.1+'))) {
      const protocols = tunneledProtocols(offered);
      if (protocols.length === 0)
        throw Object.assign(new StatusError(400, 'BadRequest', 'unable to upgrade: no tunneling spdy protocols provided'), {
          plainText: true,
        });
      await tunnelPortForward(
        { socket: upgrade.socket, head: upgrade.head, key, remoteAddress: remoteAddressOf(state), headers: headersOf(state) },
        backend,
        protocols,
      );
      return;
    }
  }
  await passUpgradeThrough(state, upgrade, backend);
}

/** the proxy subpath as kube's getRequestOptions builds it */
function proxySubpath(state: RequestState): string {
  let p = state.info.parts.slice(3).join('/');
  if (p !== '' && !p.startsWith('/')) p = '/' + p;
  if (state.path.endsWith('/') && !p.endsWith('/')) p += '/';
  return p;
}

async function serveProxy(state: RequestState, deps: ConnectDeps, lookup: Lookup, resource: string): Promise<void> {
  const info = state.info;
  const timeoutMs = deps.kubelet.config.timeoutMs;
  const backend =
    resource === 'pods'
      ? await podProxyLocation(lookup, info.namespace, info.name, timeoutMs)
      : resource === 'nodes'
        ? await nodeProxyLocation(lookup, deps.kubelet, info.name)
        : await serviceProxyLocation(lookup, info.namespace, info.name, timeoutMs);
  const path = joinPreservingTrailingSlash(backend.url.pathname === '/' ? '' : backend.url.pathname, proxySubpath(state));
  const upgrade = state.upgrade;
  if (upgrade && isUpgradeRequest(state)) {
    backend.url.pathname = path === '' ? '/' : path;
    backend.url.search = rawQuery(state);
    await passUpgradeThrough(state, upgrade, backend);
    return;
  }
  if (path === '') {
    // kube redirects an empty subpath to the same URL with a slash
    state.res.setHeader('Location', `${state.path}/${rawQuery(state)}`);
    state.res.writeHead(301);
    state.res.end();
    return;
  }
  backend.url.pathname = path;
  backend.url.search = rawQuery(state);
  const body = state.method === 'GET' || state.method === 'HEAD' ? undefined : (state.req as AsyncIterable<Buffer>);
  let res;
  try {
    res = await sendToBackend(backend, state.method, forwardedRequestHeaders(state, backend.url.host), body, state.signal);
  } catch (err) {
    throw unknownFailure(err instanceof Error ? err.message : String(err));
  }
  await relayResponse(res, state);
}

/** Status errors as they are, storage errors for the resource, anything else as kube answers
 *  an error that is not a Status: 500 with its text */
function asStatus(err: unknown, resource: string, name: string): StatusError {
  if (err instanceof StatusError) return err;
  if (err instanceof StorageError) return toStatusError(err, { group: '', resource, name });
  return unknownFailure(err instanceof Error ? err.message : String(err));
}

function methodAllowed(kind: string, method: string): boolean {
  if (kind === 'pods/log') return method === 'GET';
  if (kind.endsWith('/proxy')) return PROXY_METHODS.has(method);
  return STREAM_METHODS.has(method);
}

async function writeFailure(state: RequestState, err: unknown, resource: string): Promise<void> {
  const socket: Duplex | undefined = state.upgrade?.socket;
  if (state.res.headersSent || state.res.writableEnded) {
    if (!state.res.writableEnded) state.res.destroy();
    return;
  }
  if (socket && (socket.destroyed || !socket.writable)) return;
  if (err instanceof StatusError && (err as StatusError & { plainText?: boolean }).plainText) {
    state.res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    state.res.setHeader('X-Content-Type-Options', 'nosniff');
    state.res.writeHead(err.code);
    state.res.end(err.message + '\n');
    return;
  }
  await writeError(state, err, { group: '', resource, name: state.info.name });
}

/** serves the request when it is one of the connect subresources; false otherwise */
export function createConnectHandler(deps: ConnectDeps): (state: RequestState) => Promise<boolean> {
  return async (state) => {
    const info = state.info;
    if (info.apiGroup !== '' || info.apiVersion !== 'v1' || info.verbViaPathPrefix) return false;
    const kind = `${info.resource}/${info.subresource}`;
    if (!SERVED.has(kind)) return false;
    const namespaced = info.resource !== 'nodes';
    if (namespaced !== info.namespaceInPath) return false;
    if (!kind.endsWith('/proxy') && info.parts.length > 3) return false;
    const lookup: Lookup = { resolver: deps.resolver, ctx: contextOf(state), allowLoopback: deps.allowLoopback };
    try {
      if (!methodAllowed(kind, state.method)) throw errors.methodNotRegistered();
      if (kind === 'pods/log') await serveLog(state, deps, lookup);
      else if (kind === 'pods/exec') await serveStream(state, deps, lookup, 'exec');
      else if (kind === 'pods/attach') await serveStream(state, deps, lookup, 'attach');
      else if (kind === 'pods/portforward') await servePortForward(state, deps, lookup);
      else await serveProxy(state, deps, lookup, info.resource);
    } catch (err) {
      await writeFailure(state, asStatus(err, info.resource, info.name), info.resource);
    } finally {
      // an upgraded connection that is over must not linger
      const socket = state.upgrade?.socket;
      if (socket && state.res.writableEnded === false && state.res.headersSent === false && socket.destroyed) state.res.destroy();
    }
    return true;
  };
}
