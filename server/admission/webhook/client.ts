// Posts an AdmissionReview to a webhook and reads its answer. `url` is called as given;
// `service` is reached through the Service's Endpoints or EndpointSlices (the first ready
// address of the port the reference names; kapi has no cluster network, so this only works when those
// addresses are reachable from kapi), checking the certificate for `<name>.<namespace>.svc`.
// Never throws anything but WebhookCallError; a slow webhook is cut at its timeout.

import https from 'node:https';
import http from 'node:http';
import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceResolver } from '../../registry/rest.js';
import { internalContext } from '../../controllers/util.js';
import { WebhookCallError } from '../errors.js';
import type { WebhookClientConfig } from '../../registry/admissionregistration/webhook-client.js';
import { anonymous, type CredentialResolver, type WebhookCredentials } from './credentials.js';

const MAX_RESPONSE_BYTES = 3 * 1024 * 1024 * 10;

export interface CallTarget {
  url: URL;
  /** the name the certificate must carry (service references) */
  servername?: string;
  ca?: string;
  /** how kapi authenticates to the webhook (WebhookAdmissionConfiguration's kubeconfig) */
  credentials?: WebhookCredentials;
}

/** where a webhook is reached; throws WebhookCallError when a service has no endpoint */
export async function resolveTarget(
  webhookName: string,
  cfg: WebhookClientConfig,
  resolver: ResourceResolver,
  credentialsFor: CredentialResolver = anonymous,
): Promise<CallTarget> {
  const ca = cfg.caBundle ? Buffer.from(cfg.caBundle, 'base64').toString('utf8') : undefined;
  if (cfg.url) {
    let url: URL;
    try {
      url = new URL(cfg.url);
    } catch {
      throw new WebhookCallError(webhookName, `could not get REST client: invalid url "${cfg.url}"`);
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    return { url, ca, credentials: credentialsFor(url.port ? `${host}:${url.port}` : host, host) };
  }
  const svc = cfg.service;
  if (!svc) throw new WebhookCallError(webhookName, 'could not get REST client: neither service nor URL specified');
  const port = svc.port ?? 443;
  const address = await serviceAddress(webhookName, svc.namespace, svc.name, port, resolver);
  const path = svc.path ?? '/';
  const dnsName = `${svc.name}.${svc.namespace}.svc`;
  return {
    url: new URL(`https://${address}${path.startsWith('/') ? path : '/' + path}`),
    servername: dnsName,
    ca,
    credentials: credentialsFor(`${dnsName}:${port}`, dnsName),
  };
}

interface NamedPort {
  name?: string;
  port?: number;
}
interface ServiceShape {
  spec?: { ports?: NamedPort[] };
}
interface EndpointsShape {
  subsets?: { ports?: NamedPort[]; addresses?: { ip?: string }[] }[];
}
interface EndpointSliceShape {
  ports?: NamedPort[];
  endpoints?: { conditions?: { ready?: boolean }; addresses?: string[] }[];
}

/** the port a backend serves the service's port on: the one with its name, or the only one */
function backendPort(ports: NamedPort[], portName: string): NamedPort | undefined {
  return ports.find((x) => (x.name ?? '') === portName) ?? (ports.length === 1 ? ports[0] : undefined);
}

async function serviceAddress(
  webhookName: string,
  namespace: string,
  name: string,
  port: number,
  resolver: ResourceResolver,
): Promise<string> {
  const noEndpoints = () =>
    new WebhookCallError(webhookName, `failed to call webhook: service "${namespace}/${name}" has no ready endpoint for port ${port}`);
  const ctx = internalContext('kube-apiserver', namespace);
  let service: ServiceShape;
  try {
    service = (await resolver.lookup('', 'v1', 'services')!.get(ctx, name, {})) as ServiceShape;
  } catch {
    throw new WebhookCallError(webhookName, `failed to call webhook: service "${name}" not found`);
  }
  const svcPort = (service.spec?.ports ?? []).find((p) => p.port === port);
  if (!svcPort) throw new WebhookCallError(webhookName, `failed to call webhook: service "${namespace}/${name}" has no port ${port}`);
  const hostPort = (ip: string, p: number) => `${ip.includes(':') ? `[${ip}]` : ip}:${p}`;
  const portName = String(svcPort.name ?? '');
  try {
    const endpoints = (await resolver.lookup('', 'v1', 'endpoints')!.get(ctx, name, {})) as EndpointsShape;
    for (const subset of endpoints.subsets ?? []) {
      const p = backendPort(subset.ports ?? [], portName);
      const addr = (subset.addresses ?? [])[0];
      if (p?.port !== undefined && addr?.ip) return hostPort(String(addr.ip), p.port);
    }
  } catch {
    // no Endpoints object: the EndpointSlices below may still name the service's backends
  }
  const slices = resolver.lookup('discovery.k8s.io', 'v1', 'endpointslices');
  if (slices) {
    let list: { items: KubeObject[] } = { items: [] };
    try {
      list = await slices.list(ctx, { labelSelector: `kubernetes.io/service-name=${name}` });
    } catch {
      // nothing to add: the call fails below
    }
    for (const slice of list.items as EndpointSliceShape[]) {
      const p = backendPort(slice.ports ?? [], portName);
      const ready = (slice.endpoints ?? []).find((e) => e.conditions?.ready !== false && (e.addresses ?? []).length > 0);
      if (p?.port && ready?.addresses) return hostPort(String(ready.addresses[0]), p.port);
    }
  }
  throw noEndpoints();
}

function describe(err: NodeJS.ErrnoException, url: URL): string {
  const host = url.host;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${host}: connect: connection refused`;
    case 'ENOTFOUND':
      return `dial tcp: lookup ${url.hostname}: no such host`;
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    default:
      return err.message.startsWith('self-signed') || err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT')
        ? `tls: failed to verify certificate: ${err.message}`
        : err.message;
  }
}

/**
 * POSTs `body` (JSON) and returns the parsed JSON answer. `timeoutMs` bounds the whole call;
 * `signal` (the client's request) cuts it as well.
 */
export function postReview(
  webhookName: string,
  target: CallTarget,
  body: unknown,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<unknown> {
  const url = new URL(target.url);
  // tell the webhook how long it has, as kube does (rounded up to whole seconds)
  url.searchParams.set('timeout', `${Math.ceil(timeoutMs / 1000)}s`);
  const shown = `Post "${url.toString()}"`;
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(new WebhookCallError(webhookName, `failed to call webhook: ${why}`));
    };
    const timer = setTimeout(() => {
      fail(`${shown}: context deadline exceeded`);
      req.destroy();
    }, timeoutMs);
    const onAbort = () => {
      fail(`${shown}: context canceled`);
      req.destroy();
    };
    const cleanup = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const options: https.RequestOptions = {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, */*', 'content-length': payload.length },
      agent: false,
    };
    if (target.ca) options.ca = target.ca;
    if (target.credentials?.cert && target.credentials.key) {
      options.cert = target.credentials.cert;
      options.key = target.credentials.key;
    }
    if (target.credentials?.authorization) (options.headers as Record<string, string>).authorization = target.credentials.authorization;
    if (target.servername) options.servername = target.servername;
    const lib = url.protocol === 'http:' ? http : https;
    const req = lib.request(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_RESPONSE_BYTES) {
          fail(`${shown}: response too large`);
          req.destroy();
          return;
        }
        chunks.push(c);
      });
      res.on('error', (err) => fail(`${shown}: ${describe(err, url)}`));
      res.on('end', () => {
        if (settled) return;
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299) {
          const snippet = text.length > 200 ? text.slice(0, 200) : text;
          fail(`an error on the server ("${snippet}") has prevented the request from succeeding`);
          return;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (err) {
          fail(`${(err as Error).message}`);
          return;
        }
        settled = true;
        cleanup();
        resolve(parsed);
      });
    });
    req.on('error', (err) => fail(`${shown}: ${describe(err, url)}`));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    req.end(payload);
  });
}
