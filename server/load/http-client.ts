// The load generator's HTTPS client: HTTP/1.1 with keep-alive sockets, so that behind a TCP
// load balancer the connections (and the load) spread over the replicas, as many clients'
// would. Every call is recorded with the replica that answered (the Kapi-Replica header).

import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { KubeconfigTarget } from '../kubeconfig/read.js';
import type { Recorder } from './recorder.js';

export const REPLICA_HEADER = 'kapi-replica';
const JSON_TYPE = 'application/json';

export interface Answer {
  status: number;
  body: Buffer;
  replica: string;
  headers: IncomingMessage['headers'];
}

export interface CallOptions {
  body?: unknown;
  /** of the body; JSON by default */
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
}

function statusReason(status: number, body: Buffer, contentType: string | undefined): string | undefined {
  if (status < 400 || !contentType?.startsWith(JSON_TYPE)) return undefined;
  try {
    return (JSON.parse(body.toString()) as { reason?: string }).reason || undefined;
  } catch {
    return undefined;
  }
}

export class LoadClient {
  private readonly agent: https.Agent;
  /** watches hold their sockets for the whole run: they must not take the calls' */
  private readonly watchAgent: https.Agent;

  constructor(
    private readonly target: KubeconfigTarget,
    private readonly recorder: Recorder,
    maxSockets: number,
  ) {
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets,
      ca: target.ca,
      cert: target.cert,
      key: target.key,
      rejectUnauthorized: !target.insecureSkipVerify,
    });
    this.watchAgent = new https.Agent({
      keepAlive: false,
      ca: target.ca,
      cert: target.cert,
      key: target.key,
      rejectUnauthorized: !target.insecureSkipVerify,
    });
  }

  private headers(accept: string, body?: Buffer, contentType = JSON_TYPE): Record<string, string> {
    const h: Record<string, string> = { accept, 'user-agent': 'kapi-load' };
    if (this.target.token) h.authorization = `Bearer ${this.target.token}`;
    if (body) {
      h['content-type'] = contentType;
      h['content-length'] = String(body.length);
    }
    return h;
  }

  /** one call, recorded under `verb` and `resource`; never throws (a failure is status 0) */
  call(verb: string, resource: string, method: string, path: string, opts: CallOptions = {}): Promise<Answer> {
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const startedAt = performance.now();
    return new Promise((resolve) => {
      const done = (a: Answer, reason?: string): void => {
        this.recorder.record({
          verb,
          resource,
          replica: a.replica,
          status: a.status,
          reason,
          startedAt,
          latencyMs: performance.now() - startedAt,
        });
        resolve(a);
      };
      const req = https.request({
        agent: this.agent,
        host: this.target.server.hostname,
        port: this.target.server.port || 443,
        method,
        path,
        headers: this.headers(opts.accept ?? JSON_TYPE, body, opts.contentType),
      });
      req.setTimeout(opts.timeoutMs ?? 60_000, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
      req.on('error', (err: NodeJS.ErrnoException) =>
        done({ status: 0, body: Buffer.alloc(0), replica: '', headers: {} }, err.code ?? err.message),
      );
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err: NodeJS.ErrnoException) =>
          done({ status: 0, body: Buffer.alloc(0), replica: '', headers: {} }, err.code ?? err.message),
        );
        res.on('end', () => {
          const answer = {
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks),
            replica: String(res.headers[REPLICA_HEADER] ?? ''),
            headers: res.headers,
          };
          done(answer, statusReason(answer.status, answer.body, res.headers['content-type']));
        });
      });
      req.end(body);
    });
  }

  /** a call whose failure ends the run (set-up and clean-up) */
  async must(verb: string, resource: string, method: string, path: string, opts: CallOptions = {}): Promise<Answer> {
    const a = await this.call(verb, resource, method, path, opts);
    if (a.status < 200 || a.status >= 300)
      throw new Error(`${method} ${path}: HTTP ${a.status || 'no answer'}: ${a.body.toString().slice(0, 300)}`);
    return a;
  }

  /**
   * Opens a watch; each complete line of the JSON stream goes to onLine. Resolves the answer's
   * status and replica once headers arrive; `ended` resolves when the stream closes.
   */
  openWatch(
    path: string,
    onLine: (line: string) => void,
    signal: AbortSignal,
  ): Promise<{ status: number; replica: string; ended: Promise<void> }> {
    return new Promise((resolve) => {
      const req = https.request({
        agent: this.watchAgent,
        host: this.target.server.hostname,
        port: this.target.server.port || 443,
        method: 'GET',
        path,
        headers: this.headers(JSON_TYPE),
        signal,
      });
      req.on('error', () => resolve({ status: 0, replica: '', ended: Promise.resolve() }));
      req.on('response', (res) => {
        const ended = new Promise<void>((r) => {
          res.on('close', r);
          res.on('error', () => r());
        });
        let partial = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const text = partial + chunk;
          let from = 0;
          let nl: number;
          while ((nl = text.indexOf('\n', from)) >= 0) {
            if (nl > from) onLine(text.slice(from, nl));
            from = nl + 1;
          }
          partial = text.slice(from);
        });
        resolve({ status: res.statusCode ?? 0, replica: String(res.headers[REPLICA_HEADER] ?? ''), ended });
      });
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }
}
