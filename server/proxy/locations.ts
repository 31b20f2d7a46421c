// Where each connect subresource goes, as kube's pod, node and service strategies compute
// it: the kubelet's /containerLogs, /exec, /attach and /portForward paths for a pod's node;
// a pod's IP and port; a node's kubelet (or another of its ports); a ready endpoint of a
// Service. Failures are kube's Status errors with kube's wording.

import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import type { KubeObject } from '../../storage/interface.js';
import type { RequestContext, ResourceResolver } from '../registry/rest.js';
import { errors } from '../machinery/status.js';
import { type Backend, type KubeletClient, joinHostPort } from './kubelet-client.js';

/** the transport for pods, services and node ports other than the kubelet's (kube: no verification) */
const PROXY_TLS = { rejectUnauthorized: false };

interface Container {
  name?: string;
  ports?: { containerPort?: number }[];
}

function containersOf(pod: KubeObject): { regular: Container[]; all: Container[] } {
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[]; ephemeralContainers?: Container[] };
  const regular = Array.isArray(spec.containers) ? spec.containers : [];
  const init = Array.isArray(spec.initContainers) ? spec.initContainers : [];
  const ephemeral = Array.isArray(spec.ephemeralContainers) ? spec.ephemeralContainers : [];
  return { regular, all: [...init, ...regular, ...ephemeral] };
}

/** kube's validateContainer: the named container, or the only one */
export function containerFor(pod: KubeObject, requested: string): string {
  const name = pod.metadata.name ?? '';
  const { regular, all } = containersOf(pod);
  if (requested === '') {
    if (regular.length === 1) return regular[0].name ?? '';
    if (regular.length === 0) throw errors.badRequest(`a container name must be specified for pod ${name}`);
    const spec = (pod.spec ?? {}) as { initContainers?: { name?: string }[]; ephemeralContainers?: { name?: string }[] };
    const names = (list: { name?: string }[] | undefined): string => (Array.isArray(list) ? list : []).map((c) => c.name ?? '').join(' ');
    let message = `a container name must be specified for pod ${name}, choose one of: [${names(regular)}]`;
    if (names(spec.initContainers) !== '') message += ` or one of the init containers: [${names(spec.initContainers)}]`;
    if (names(spec.ephemeralContainers) !== '') message += ` or one of the ephemeral containers: [${names(spec.ephemeralContainers)}]`;
    throw errors.badRequest(message);
  }
  if (!all.some((c) => c.name === requested)) throw errors.badRequest(`container ${requested} is not valid for pod ${name}`);
  return requested;
}

export function nodeNameOf(pod: KubeObject): string {
  const spec = (pod.spec ?? {}) as { nodeName?: unknown };
  return typeof spec.nodeName === 'string' ? spec.nodeName : '';
}

/** kube's SplitSchemeNamePort: `name`, `name:port` or `scheme:name:port` (scheme http or https) */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) [name, port] = parts;
  else if (parts.length === 3) [scheme, name, port] = parts;
  else return undefined;
  if (name === '' || !['', 'http', 'https'].includes(scheme)) return undefined;
  return { scheme, name, port };
}

export interface Lookup {
  resolver: ResourceResolver;
  ctx: RequestContext;
  /** kapi's --allow-loopback-proxy-targets: loopback targets pass the address check (tests and
   *  one-machine set-ups; kube never allows them) */
  allowLoopback?: boolean;
}

/** kube's address check of a proxy target, with kapi's loopback exception */
function proxyable(l: Lookup, ip: string): boolean {
  return isGlobalUnicast(ip) || (l.allowLoopback === true && isLoopback(ip));
}

function isLoopback(ip: string): boolean {
  const lower = ip.toLowerCase();
  return /^127\./.test(lower) || lower === '::1' || /^::ffff:127\./.test(lower);
}

export async function getObject(l: Lookup, resource: string, name: string, namespace: string): Promise<KubeObject> {
  const store = l.resolver.lookup('', 'v1', resource);
  if (!store) throw errors.notFound({ group: '', resource, name });
  return store.get({ ...l.ctx, namespace }, name, {});
}

function podIP(pod: KubeObject): string {
  const status = (pod.status ?? {}) as { podIPs?: { ip?: string }[]; podIP?: string };
  return status.podIPs?.[0]?.ip ?? '';
}

/** Go's IP.IsGlobalUnicast */
function isGlobalUnicast(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) {
    const [a, b] = ip.split('.').map(Number);
    if (a === 0 || a === 127 || a >= 224) return false;
    if (a === 169 && b === 254) return false;
    return ip !== '255.255.255.255';
  }
  if (family === 6) {
    const lower = ip.toLowerCase();
    // Go reads an IPv4-mapped address as the IPv4 address it maps
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
    if (mapped) return isGlobalUnicast(mapped[1]);
    if (lower === '::' || lower === '::1') return false;
    if (/^fe[89ab]/.test(lower) || lower.startsWith('ff')) return false;
    return true;
  }
  return false;
}

/** kube's isProxyableHostname for nodes: every address the name resolves to (an IP resolves to
 *  itself) must be global unicast, so a loopback Node address is refused however it is spelled */
async function checkProxyableHostname(l: Lookup, hostname: string): Promise<void> {
  let addresses: { address: string }[];
  try {
    addresses = isIP(hostname) ? [{ address: hostname }] : await lookup(hostname, { all: true });
  } catch {
    throw errors.badRequest(`lookup ${hostname}: no such host`);
  }
  if (addresses.length === 0) throw errors.badRequest('no addresses for hostname');
  if (addresses.some((a) => !proxyable(l, a.address))) throw errors.badRequest('address not allowed');
}

function urlFor(scheme: string, host: string, port: string, path: string): URL {
  const url = new URL(`${scheme || 'http'}://${port ? joinHostPort(host, port) : host.includes(':') ? `[${host}]` : host}`);
  url.pathname = path;
  return url;
}

/** kube's pod ResourceLocation */
export async function podProxyLocation(l: Lookup, namespace: string, id: string, timeoutMs: number): Promise<Backend> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw errors.badRequest(`invalid pod request ${JSON.stringify(id)}`);
  const pod = await getObject(l, 'pods', parsed.name, namespace);
  let port = parsed.port;
  if (port === '') {
    for (const c of containersOf(pod).regular) {
      const first = c.ports?.[0]?.containerPort;
      if (first !== undefined) {
        port = String(first);
        break;
      }
    }
  }
  const ip = podIP(pod);
  if (!proxyable(l, ip)) throw errors.badRequest('address not allowed');
  const scheme = parsed.scheme || 'http';
  return { url: urlFor(scheme, ip, port, '/'), tls: scheme === 'https' ? PROXY_TLS : undefined, connectTimeoutMs: timeoutMs };
}

/** kube's node ResourceLocation */
export async function nodeProxyLocation(l: Lookup, kubelet: KubeletClient, id: string): Promise<Backend> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw errors.badRequest(`invalid node request ${JSON.stringify(id)}`);
  const info = await kubelet.connectionInfo(l.ctx, parsed.name);
  await checkProxyableHostname(l, info.hostname);
  if (parsed.port === '' || parsed.port === info.port) return kubelet.backend(info, '/', new URLSearchParams());
  const scheme = parsed.scheme || 'http';
  return {
    url: urlFor(scheme, info.hostname, parsed.port, '/'),
    tls: scheme === 'https' ? PROXY_TLS : undefined,
    connectTimeoutMs: kubelet.config.timeoutMs,
  };
}

interface ServicePort {
  name?: string;
  port?: number;
}

interface SliceEndpoint {
  addresses?: string[];
  conditions?: { ready?: boolean };
  targetRef?: { kind?: string; name?: string; namespace?: string };
}

/** kube's service ResourceLocation, over the Service's EndpointSlices */
export async function serviceProxyLocation(l: Lookup, namespace: string, id: string, timeoutMs: number): Promise<Backend> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw errors.badRequest(`invalid service request ${JSON.stringify(id)}`);
  const svcName = parsed.name;
  let portName = parsed.port;
  const svc = await getObject(l, 'services', svcName, namespace);
  if (/^[+-]?\d+$/.test(portName)) {
    const wanted = Number(portName);
    const ports = ((svc.spec ?? {}) as { ports?: ServicePort[] }).ports ?? [];
    const found = ports.find((p) => p.port === wanted);
    if (!found) throw errors.unavailable(`no service port ${wanted} found for service ${JSON.stringify(svcName)}`);
    portName = found.name ?? '';
  }
  const slices = l.resolver.lookup('discovery.k8s.io', 'v1', 'endpointslices');
  const list = slices
    ? await slices.list({ ...l.ctx, namespace }, { labelSelector: `kubernetes.io/service-name=${svcName}` })
    : { items: [] as KubeObject[] };
  if (list.items.length === 0) throw errors.unavailable(`no endpoints available for service ${JSON.stringify(svcName)}`);
  for (const slice of list.items) {
    const port = ((slice as { ports?: ServicePort[] }).ports ?? []).find((p) => (p.name ?? '') === portName);
    if (!port || port.port === undefined) continue;
    for (const ep of (slice as { endpoints?: SliceEndpoint[] }).endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      const address = ep.addresses?.[0];
      if (!address || !(await isValidEndpoint(l, ep, address, namespace))) continue;
      const scheme = parsed.scheme || 'http';
      return {
        url: urlFor(scheme, address, String(port.port), '/'),
        tls: scheme === 'https' ? PROXY_TLS : undefined,
        connectTimeoutMs: timeoutMs,
      };
    }
  }
  throw errors.unavailable(`no endpoints available for service ${JSON.stringify(id)}`);
}

/** kube's isValidAddress: an endpoint must name a Pod that has its address */
async function isValidEndpoint(l: Lookup, ep: SliceEndpoint, address: string, namespace: string): Promise<boolean> {
  if (!ep.targetRef || ep.targetRef.kind !== 'Pod' || !ep.targetRef.name) return false;
  try {
    const pod = await getObject(l, 'pods', ep.targetRef.name, ep.targetRef.namespace || namespace);
    const status = (pod.status ?? {}) as { podIPs?: { ip?: string }[] };
    return (status.podIPs ?? []).some((p) => p.ip === address);
  } catch {
    return false;
  }
}

/** `location.Path = JoinPreservingTrailingSlash(location.Path, subpath)` */
export function joinPreservingTrailingSlash(base: string, sub: string): string {
  const joined = `${base}/${sub}`.replace(/\/+/g, '/');
  const cleaned = joined === '/' ? (base === '' && sub === '' ? '' : '/') : joined.replace(/\/$/, '');
  return sub.endsWith('/') && !cleaned.endsWith('/') ? cleaned + '/' : cleaned;
}
