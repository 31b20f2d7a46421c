// Connections to aggregated API servers: TLS as the APIService asks (its caBundle, or no
// verification with insecureSkipTLSVerify; the name checked is `<service>.<namespace>.svc`),
// kapi's front-proxy client certificate (--proxy-client-cert-file/--proxy-client-key-file),
// one keep-alive agent per APIService, and bounded GETs for the documents kapi reads itself.
// Errors read like Go's net/http ones, because kube's messages embed them.

import https from 'node:https';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { BACKEND_FETCH_TIMEOUT_MS } from '../limits/backend-limits.js';
import type { APIServiceView } from './api-services.js';
import { authority } from './service-endpoint.js';
import type { BackendTls } from '../proxy/kubelet-client.js';

export interface ProxyClientCertificate {
  cert: Buffer;
  key: Buffer;
}

/** the user kube-aggregator names itself when it calls a backend for its own reasons */
export const AGGREGATOR_USER = 'system:kube-aggregator';

export class BackendError extends Error {
  override name = 'BackendError';
}

/** Go's wording for a failed dial, read or handshake */
export function describeNetworkError(err: NodeJS.ErrnoException, hostPort: string): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${hostPort}: connect: connection refused`;
    case 'ETIMEDOUT':
    case 'ECONNECT_TIMEOUT':
      return `dial tcp ${hostPort}: i/o timeout`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${hostPort.replace(/:\d+$/, '')}: no such host`;
    case 'ECONNRESET':
      return `read tcp ${hostPort}: read: connection reset by peer`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: ${err.message}`;
    default:
      if (err.code && /CERT|SIGNATURE|SELF_SIGNED|ISSUER/.test(err.code)) {
        return `tls: failed to verify certificate: x509: certificate signed by unknown authority`;
      }
      return err.message;
  }
}

export interface BackendTarget {
  api: APIServiceView;
  host: string;
  port: number;
}

/** One keep-alive agent per APIService and TLS setting, replaced when the APIService's TLS
 *  fields change, so a request never pays a handshake it does not need. */
export class BackendAgents {
  private readonly agents = new Map<string, { fingerprint: string; agent: https.Agent }>();

  constructor(private readonly clientCertificate: ProxyClientCertificate | undefined) {}

  agentFor(api: APIServiceView, opts: { skipVerify?: boolean } = {}): https.Agent {
    const skipVerify = opts.skipVerify === true || api.insecureSkipTLSVerify;
    const key = `${api.name}${skipVerify ? ' insecure' : ''}`;
    const fingerprint = createHash('sha256')
      .update(`${skipVerify}\0${api.caBundle ?? ''}\0${api.service?.namespace}\0${api.service?.name}`)
      .digest('hex');
    const existing = this.agents.get(key);
    if (existing && existing.fingerprint === fingerprint) return existing.agent;
    existing?.agent.destroy();
    const agent = new https.Agent({
      keepAlive: true,
      // a front serves many clients through one backend: bound what one APIService may hold
      maxSockets: 256,
      maxFreeSockets: 16,
      ...this.tlsFor(api, opts),
    });
    this.agents.set(key, { fingerprint, agent });
    return agent;
  }

  /** how a connection to the APIService's backend is secured (also for upgraded requests,
   *  which take a connection of their own rather than the agent's) */
  tlsFor(api: APIServiceView, opts: { skipVerify?: boolean } = {}): BackendTls {
    const skipVerify = opts.skipVerify === true || api.insecureSkipTLSVerify;
    return {
      rejectUnauthorized: !skipVerify,
      ca: skipVerify || api.caBundle === undefined ? undefined : Buffer.from(api.caBundle),
      servername: api.service ? `${api.service.name}.${api.service.namespace}.svc` : undefined,
      cert: this.clientCertificate?.cert,
      key: this.clientCertificate?.key,
    };
  }

  /** drops the agents of APIServices that no longer exist */
  retain(names: ReadonlySet<string>): void {
    for (const [key, entry] of this.agents) {
      if (!names.has(key.replace(/ insecure$/, ''))) {
        entry.agent.destroy();
        this.agents.delete(key);
      }
    }
  }

  close(): void {
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

export interface BoundedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface BoundedGetOptions {
  agent: https.Agent;
  headers: Record<string, string | string[]>;
  maxBytes: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export function backendURL(target: BackendTarget, path: string): string {
  return `https://${authority(target.host, target.port)}${path}`;
}

/** A GET whose answer is read whole, up to `maxBytes`; rejects with BackendError worded as
 *  Go's `Get "<url>": ...`. Redirects are not followed (kube's discovery client does not). */
export function boundedGet(url: string, opts: BoundedGetOptions): Promise<BoundedResponse> {
  const timeoutMs = opts.timeoutMs ?? BACKEND_FETCH_TIMEOUT_MS;
  const parsed = new URL(url);
  const shown = `Get ${JSON.stringify(url)}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: BoundedResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const onAbort = (): void => finish(new BackendError(`${shown}: context canceled`));
    const timer = setTimeout(
      () => finish(new BackendError(`${shown}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)),
      timeoutMs,
    );
    const req = https.request(parsed, { method: 'GET', agent: opts.agent, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) {
          finish(new BackendError(`${shown}: response larger than ${opts.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err) => finish(new BackendError(`${shown}: ${describeNetworkError(err, parsed.host)}`)));
      res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', (err) => finish(new BackendError(`${shown}: ${describeNetworkError(err, parsed.host)}`)));
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    req.end();
  });
}

/** kube's SetAuthProxyHeaders: the user (no UID: RemoteRequestHeaderUID is off in 1.33),
 *  one X-Remote-Group per group, one X-Remote-Extra-<escaped key> per value */
export function authProxyHeaders(
  username: string,
  groups: readonly string[],
  extra: Readonly<Record<string, readonly string[]>> | undefined,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'x-remote-user': username };
  if (groups.length > 0) headers['x-remote-group'] = [...groups];
  for (const [key, values] of Object.entries(extra ?? {})) {
    if (values.length > 0) headers[`x-remote-extra-${escapeExtraKey(key)}`] = [...values];
  }
  return headers;
}

const TOKEN_CHARS = /^[!#$&'*+\-.^_`|~0-9A-Za-z]$/;

/** percent-encodes every byte that may not appear in a header name, and `%` itself, so the
 *  receiving side's unescape gives the key back */
export function escapeExtraKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && TOKEN_CHARS.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
