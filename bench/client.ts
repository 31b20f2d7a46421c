// The benchmark's HTTPS client: a bearer token (as the kube-apiserver comparison used),
// no client certificate, keep-alive HTTP/1.1 connections with one request in flight each.
//
// It frames requests and reads responses itself over TLS sockets instead of going through
// node:https. The load client shares the 2-core machine with kapi and etcd, so every
// microsecond it spends is one kapi cannot have: node's client cost 0.115 ms of CPU per
// create against 0.05 for the raw etcd side's gRPC client, and throughput ratios measured
// the client as much as kapi (bench/results.md, "A lean bench client").

import tls from 'node:tls';
import { HttpResponseReader } from './http-response.js';

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

interface Pending {
  resolve: (r: BenchResponse) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  reader: HttpResponseReader;
}

/** one keep-alive TLS connection carrying one request at a time */
class Connection {
  private pending: Pending | undefined;
  closed = false;

  constructor(
    private readonly socket: tls.TLSSocket,
    private readonly onIdle: (c: Connection) => void,
    private readonly onClosed: (c: Connection) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('error', (err) => this.fail(err));
    socket.on('end', () => this.fail(new Error('connection closed by the server')));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  send(request: Buffer, method: string, timeoutMs: number, describe: string): Promise<BenchResponse> {
    if (this.closed) return Promise.reject(new Error(`${describe}: connection closed before the request was sent`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.socket.destroy(new Error(`${describe}: no answer in time`)), timeoutMs);
      this.pending = { resolve, reject, timer, reader: new HttpResponseReader(method === 'HEAD') };
      this.socket.write(request);
    });
  }

  private onData(data: Buffer): void {
    const p = this.pending;
    if (!p) {
      this.socket.destroy(new Error('bytes from the server with no request in flight'));
      return;
    }
    let done: boolean;
    try {
      done = p.reader.push(data);
    } catch (err) {
      this.socket.destroy(err as Error);
      return;
    }
    if (!done) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    const { status, body, keepAlive } = p.reader.response();
    if (keepAlive) this.onIdle(this);
    else this.socket.destroy();
    p.resolve({ status, body });
  }

  private fail(err: Error): void {
    if (!this.closed) {
      this.closed = true;
      this.onClosed(this);
    }
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    p.reject(err);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export class TokenClient {
  private readonly host: string;
  private readonly port: number;
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private opening = 0;
  private readonly waiting: ((c: Connection | Error) => void)[] = [];
  private readonly fixedHeaders: string;

  constructor(
    server: string,
    private readonly ca: Buffer,
    token: string,
    private readonly maxSockets: number,
  ) {
    const url = new URL(server);
    this.host = url.hostname;
    this.port = Number(url.port || 443);
    this.fixedHeaders = `host: ${url.host}\r\nauthorization: Bearer ${token}\r\n`;
  }

  async request(method: string, path: string, opts: BenchRequest = {}): Promise<BenchResponse> {
    let head = `${method} ${path} HTTP/1.1\r\n${this.fixedHeaders}accept: ${opts.accept ?? 'application/json'}\r\n`;
    if (opts.body) head += `content-type: ${opts.contentType ?? 'application/json'}\r\ncontent-length: ${opts.body.length}\r\n`;
    head += '\r\n';
    const request = opts.body ? Buffer.concat([Buffer.from(head, 'latin1'), opts.body]) : Buffer.from(head, 'latin1');
    const connection = await this.acquire();
    return connection.send(request, method, opts.timeoutMs ?? 60000, `${method} ${path}`);
  }

  /** the request, failing unless the status is `want` */
  async expect(want: number, method: string, path: string, opts?: BenchRequest): Promise<Buffer> {
    const res = await this.request(method, path, opts);
    if (res.status !== want) throw new Error(`${method} ${path}: HTTP ${res.status} (want ${want}): ${res.body.toString().slice(0, 300)}`);
    return res.body;
  }

  close(): void {
    for (const c of this.all) c.destroy();
    for (const w of this.waiting.splice(0)) w(new Error('client closed'));
  }

  private acquire(): Promise<Connection> {
    const ready = this.idle.pop();
    if (ready) return Promise.resolve(ready);
    const promise = new Promise<Connection>((resolve, reject) => this.waiting.push((c) => (c instanceof Error ? reject(c) : resolve(c))));
    if (this.all.size + this.opening < this.maxSockets) this.open();
    return promise;
  }

  private open(): void {
    this.opening++;
    let connected = false;
    const socket = tls.connect({ host: this.host, port: this.port, ca: this.ca, ALPNProtocols: ['http/1.1'] });
    const connection = new Connection(
      socket,
      (c) => this.release(c),
      (c) => {
        if (!connected) return;
        this.all.delete(c);
        const at = this.idle.indexOf(c);
        if (at >= 0) this.idle.splice(at, 1);
        // requests waiting for a connection would otherwise wait for one that never comes back
        if (this.waiting.length > this.opening && this.all.size + this.opening < this.maxSockets) this.open();
      },
    );
    socket.once('secureConnect', () => {
      connected = true;
      this.opening--;
      this.all.add(connection);
      this.release(connection);
    });
    socket.once('error', (err) => {
      if (connected) return;
      this.opening--;
      this.waiting.shift()?.(err);
    });
  }

  private release(c: Connection): void {
    if (c.closed) return;
    const next = this.waiting.shift();
    if (next) next(c);
    else this.idle.push(c);
  }
}
