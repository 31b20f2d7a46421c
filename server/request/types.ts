// The per-request state the handler chain passes down, and the minimal request/response
// surface shared by node:http (HTTP/1.1) and kapi's own HTTP/2 exchange over node's streams
// (http/h2-exchange.ts), so every layer works the same over both protocols.

import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { UserInfo } from '../machinery/user.js';
import type { RequestCancellation } from './cancellation.js';
import type { RequestInfo } from './request-info.js';

/** what the handlers read from a request (IncomingMessage and H2Request both fit) */
export interface HttpRequest extends AsyncIterable<Buffer | string> {
  readonly method?: string;
  readonly url?: string;
  readonly headers: IncomingHttpHeaders;
  readonly httpVersion: string;
  readonly socket: unknown;
  /** the body has been read to its end */
  readonly readableEnded: boolean;
  readonly destroyed: boolean;
  on(event: 'aborted' | 'close' | 'end', listener: () => void): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  off(event: 'close' | 'end', listener: () => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'error', listener: (err: Error) => void): unknown;
  resume(): unknown;
  destroy(err?: Error): unknown;
}

/** what the handlers write to (ServerResponse and H2Response both fit) */
export interface HttpResponse {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  /** everything written has been handed to the socket */
  readonly writableFinished: boolean;
  readonly destroyed?: boolean;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  getHeader(name: string): string | number | string[] | undefined;
  removeHeader(name: string): void;
  hasHeader(name: string): boolean;
  writeHead(statusCode: number, headers?: Record<string, string | number | string[]>): unknown;
  write(chunk: string | Buffer, cb?: (err?: Error | null) => void): boolean;
  end(chunk?: string | Buffer, cb?: () => void): unknown;
  flushHeaders(): void;
  on(event: 'close' | 'drain' | 'finish', listener: () => void): unknown;
  once(event: 'close' | 'drain' | 'finish', listener: () => void): unknown;
  off(event: 'close' | 'drain' | 'finish', listener: () => void): unknown;
  destroy(err?: Error): unknown;
}

export interface RequestState {
  readonly req: HttpRequest;
  readonly res: HttpResponse;
  /** upper case */
  readonly method: string;
  /** the URL path as sent, percent-decoded, never resolved (Go's URL.Path) */
  readonly path: string;
  readonly query: URLSearchParams;
  /** parsed by the request-info filter; a non-resource placeholder until then */
  info: RequestInfo;
  /** set by the authentication filter (or impersonation) */
  user?: UserInfo;
  /** texts for `Warning` response headers (written with the response) */
  readonly warnings: string[];
  /** aborted when the client goes away or the request's deadline passes; made when first asked
   *  for (request/cancellation.ts) */
  readonly signal: AbortSignal;
  /** whether the request is cancelled, without making its signal */
  readonly cancelled?: boolean;
  /** cancels the request: its signal aborts, now or when it is made */
  readonly cancellation: RequestCancellation;
  /** `Audit-Id` of this request */
  auditId: string;
  /** Date.now() when the request arrived */
  readonly receivedAt: number;
  /** false when the APIResponseCompression gate is off: no gzip whatever the client accepts */
  compressResponses?: boolean;
  /** true when the CBORServingAndStorage gate is on: CBOR bodies are read and written */
  cbor?: boolean;
  /** sees each chunk of the request body as the handler reads it (the audit log's copy);
   *  whoever reads `req`'s body hands it every chunk */
  bodyObserver?: (chunk: Buffer) => void;
  /** an HTTP/1.1 request with `Connection: Upgrade`: its socket, for a handler that switches
   *  protocols (until then the response goes out on it as usual) */
  readonly upgrade?: UpgradeSocket;
}

export interface UpgradeSocket {
  readonly socket: Duplex;
  /** bytes the HTTP parser read past the request head */
  readonly head: Buffer;
}

export type Handler = (state: RequestState) => Promise<void>;

/** one concern of the chain wrapped around the next handler */
export type Filter = (next: Handler) => Handler;

/** Lower-cased single header value (the first when repeated). */
export function header(req: HttpRequest, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  if (Array.isArray(v)) return v[0];
  return v;
}

/** every value of a header that may repeat */
export function headerValues(req: HttpRequest, name: string): string[] {
  const v = req.headers[name.toLowerCase()];
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}
