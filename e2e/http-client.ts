// A small HTTPS client for raw requests to kapi with the admin client certificate: the
// checks kubectl cannot show (continue tokens, remainingItemCount, Status bodies, watch
// streams). Keep-alive agent, so the client is not what a benchmark measures.

import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ClientRequest } from 'node:http';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface ClientCredentials {
  /** e.g. https://127.0.0.1:6443 */
  server: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

interface KubeconfigFile {
  clusters?: { name: string; cluster: Record<string, string | undefined> }[];
  users?: { name: string; user: Record<string, string | undefined> }[];
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  'current-context'?: string;
}

function pem(entry: Record<string, string | undefined>, field: string, baseDir: string): Buffer {
  const data = entry[`${field}-data`];
  if (data) return Buffer.from(data, 'base64');
  const file = entry[field];
  if (file) return readFileSync(path.resolve(baseDir, file));
  throw new Error(`kubeconfig has neither ${field}-data nor ${field}`);
}

/** Reads the server URL, CA and client certificate of the current context. */
export function loadKubeconfig(file: string): ClientCredentials {
  const doc = parseYaml(readFileSync(file, 'utf8')) as KubeconfigFile;
  const ctxName = doc['current-context'];
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context ?? doc.contexts?.[0]?.context;
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster ?? doc.clusters?.[0]?.cluster;
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user ?? doc.users?.[0]?.user;
  if (!cluster || !user || !cluster.server) throw new Error(`kubeconfig ${file}: no usable context`);
  const dir = path.dirname(file);
  return {
    server: cluster.server,
    ca: pem(cluster, 'certificate-authority', dir),
    cert: pem(user, 'client-certificate', dir),
    key: pem(user, 'client-key', dir),
  };
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** the body as sent (binary media types: protobuf, CBOR) */
  bytes?: Buffer;
}

/** JSON.parse of a response body with a message that shows the body when it is not JSON */
export function jsonOf<T = Record<string, unknown>>(res: HttpResponse): T {
  try {
    return JSON.parse(res.body) as T;
  } catch {
    throw new Error(`HTTP ${res.status}: body is not JSON: ${res.body.slice(0, 500)}`);
  }
}

export interface RequestOptions {
  /** an object is sent as JSON; a string or Buffer as is */
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** a list sends the header once per value */
  headers?: Record<string, string | string[]>;
  /** per-request deadline; the default is 30 s */
  timeoutMs?: number;
}

export interface WatchEvent {
  type: string;
  object: Record<string, unknown> & {
    kind?: string;
    metadata?: { name?: string; resourceVersion?: string; [k: string]: unknown };
  };
}

export class KubeHttpClient {
  readonly server: string;
  private readonly agent: https.Agent;
  private readonly url: URL;

  constructor(
    readonly creds: ClientCredentials,
    opts: { maxSockets?: number } = {},
  ) {
    this.server = creds.server;
    this.url = new URL(creds.server);
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets: opts.maxSockets ?? 64,
      ca: creds.ca,
      cert: creds.cert,
      key: creds.key,
    });
  }

  static fromKubeconfig(file: string, opts: { maxSockets?: number } = {}): KubeHttpClient {
    return new KubeHttpClient(loadKubeconfig(file), opts);
  }

  private open(method: string, p: string, opts: RequestOptions): { req: ClientRequest; payload?: Buffer } {
    let payload: Buffer | undefined;
    const headers: Record<string, string | string[]> = { accept: opts.accept ?? 'application/json', ...opts.headers };
    if (opts.body !== undefined) {
      payload = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const req = https.request({
      agent: this.agent,
      hostname: this.url.hostname,
      port: this.url.port,
      method,
      path: p,
      headers,
    });
    return { req, payload };
  }

  request(method: string, p: string, opts: RequestOptions = {}): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      const { req, payload } = this.open(method, p, opts);
      req.setTimeout(opts.timeoutMs ?? 30000, () => req.destroy(new Error(`${method} ${p}: no answer in time`)));
      req.on('error', reject);
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            bytes: Buffer.concat(chunks),
          }),
        );
      });
      req.end(payload);
    });
  }

  get(p: string, opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('GET', p, opts);
  }
  post(p: string, body: unknown, opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('POST', p, { ...opts, body });
  }
  put(p: string, body: unknown, opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('PUT', p, { ...opts, body });
  }
  patch(p: string, body: unknown, contentType = 'application/merge-patch+json', opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('PATCH', p, { ...opts, body, contentType });
  }
  delete(p: string, body?: unknown, opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('DELETE', p, { ...opts, body });
  }

  /** Opens a watch (the caller puts `watch=1` or `watch=true` into the path's query). */
  watch(p: string, opts: RequestOptions = {}): WatchStream {
    const { req } = this.open('GET', p, opts);
    return new WatchStream(req);
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * One watch response, read line by line. `status` resolves with the HTTP status; events are
 * kept in order and also handed to listeners as they arrive.
 */
export class WatchStream {
  readonly events: WatchEvent[] = [];
  /** the response body when the server did not answer 200 */
  errorBody = '';
  readonly status: Promise<number>;
  /** resolves when the response ends (or the request fails) */
  readonly ended: Promise<void>;
  private listeners: ((ev: WatchEvent) => void)[] = [];
  private waiters: (() => void)[] = [];
  private isEnded = false;
  private failure: Error | undefined;

  constructor(private readonly req: ClientRequest) {
    let setStatus!: (n: number) => void;
    let setEnded!: () => void;
    this.status = new Promise((r) => (setStatus = r));
    this.ended = new Promise((r) => (setEnded = r));
    const finish = (err?: Error) => {
      if (this.isEnded) return;
      this.isEnded = true;
      if (err) this.failure = err;
      setStatus(0);
      setEnded();
      this.wake();
    };
    req.on('error', (err) => finish(err));
    req.on('response', (res: IncomingMessage) => {
      setStatus(res.statusCode ?? 0);
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (res.statusCode !== 200) {
          this.errorBody += chunk;
          return;
        }
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) this.push(line);
        }
      });
      res.on('end', () => {
        if (buf.trim() && res.statusCode === 200) this.push(buf.trim());
        finish();
      });
      res.on('error', (err) => finish(err));
      res.on('close', () => finish());
    });
    req.end();
  }

  private push(line: string): void {
    let ev: WatchEvent;
    try {
      ev = JSON.parse(line) as WatchEvent;
    } catch {
      ev = { type: 'UNPARSEABLE', object: { line } };
    }
    this.events.push(ev);
    for (const l of this.listeners) l(ev);
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  onEvent(listener: (ev: WatchEvent) => void): void {
    this.listeners.push(listener);
  }

  get done(): boolean {
    return this.isEnded;
  }

  /** Waits until an event satisfying `pred` has arrived (searching from `from`). */
  async waitFor(pred: (ev: WatchEvent) => boolean, timeoutMs = 20000, from = 0): Promise<WatchEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(pred);
      if (found) return found;
      if (this.isEnded) {
        throw new Error(
          `watch ended without the expected event (${this.failure?.message ?? 'closed'}); got ${JSON.stringify(
            this.events.map((e) => [e.type, e.object?.metadata?.name]),
          )} ${this.errorBody}`,
        );
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `no expected watch event within ${timeoutMs} ms; got ${JSON.stringify(
            this.events.map((e) => [e.type, e.object?.metadata?.name]),
          )}`,
        );
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.req.destroy();
  }
}
