// The benchmark's HTTPS client: a bearer token (as the kube-apiserver comparison used),
// no client certificate, keep-alive sockets, and bodies sent as prepared bytes so that the
// client spends as little of the shared machine's CPU as it can.

import https from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface BenchResponse {
  status: number;
  body: Buffer;
}

export interface BenchRequest {
  body?: Buffer;
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
}

export class TokenClient {
  private readonly agent: https.Agent;
  private readonly url: URL;

  constructor(
    server: string,
    ca: Buffer,
    private readonly token: string,
    maxSockets: number,
  ) {
    this.url = new URL(server);
    this.agent = new https.Agent({ keepAlive: true, maxSockets, ca });
  }

  request(method: string, path: string, opts: BenchRequest = {}): Promise<BenchResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        accept: opts.accept ?? 'application/json',
        authorization: `Bearer ${this.token}`,
      };
      if (opts.body) {
        headers['content-type'] = opts.contentType ?? 'application/json';
        headers['content-length'] = String(opts.body.length);
      }
      const req = https.request({ agent: this.agent, hostname: this.url.hostname, port: this.url.port, method, path, headers });
      req.setTimeout(opts.timeoutMs ?? 60000, () => req.destroy(new Error(`${method} ${path}: no answer in time`)));
      req.on('error', reject);
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      });
      req.end(opts.body);
    });
  }

  /** the request, failing unless the status is `want` */
  async expect(want: number, method: string, path: string, opts?: BenchRequest): Promise<Buffer> {
    const res = await this.request(method, path, opts);
    if (res.status !== want) throw new Error(`${method} ${path}: HTTP ${res.status} (want ${want}): ${res.body.toString().slice(0, 300)}`);
    return res.body;
  }

  close(): void {
    this.agent.destroy();
  }
}
