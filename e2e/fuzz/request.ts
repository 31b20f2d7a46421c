// What a fuzz case sends and what came back: plain data, so that a failure can be printed as
// a request to replay and a case can be regenerated from its seed alone.

/** raw-*: the bytes of `raw` written as they are onto a TLS connection that chose that protocol */
export type Protocol = 'http/1.1' | 'h2' | 'raw-http/1.1' | 'raw-h2';
export type Caller = 'admin' | 'limited';

export interface FuzzRequest {
  /** the generator class, e.g. 'body.json.deep' (failures are grouped by it) */
  kind: string;
  protocol: Protocol;
  caller: Caller;
  method: string;
  /** sent exactly as written (no normalisation of dot segments or escapes) */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** with a raw protocol, everything sent (method and path only name the request inside) */
  raw?: Buffer;
  /** input that kube refuses whatever else the request says: a 2xx is a failure */
  mustFail?: boolean;
}

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** the response was longer than the client reads, or a watch was cut after its headers */
  truncated: boolean;
}

/** a transport failure: no complete answer (reset, closed connection, no answer in time) */
export interface FuzzTransportError {
  error: string;
}

export type FuzzOutcome = FuzzResponse | FuzzTransportError;

export function isTransportError(o: FuzzOutcome): o is FuzzTransportError {
  return 'error' in o;
}

const PRINTABLE_LIMIT = 2048;

/** the request as text: method, path, headers and the body (base64 when not printable) */
export function describeRequest(req: FuzzRequest): string {
  // the replay line rebuilds the request; the report only has to name it
  const path = req.path.length > 400 ? `${req.path.slice(0, 400)}... (${req.path.length} chars)` : req.path;
  const lines = [`[${req.kind}] ${req.protocol} as ${req.caller}: ${req.method} ${path}`];
  const headers = Object.entries(req.headers);
  if (headers.length > 12) lines.push(`  (${headers.length} headers; the first 12:)`);
  for (const [k, v] of headers.slice(0, 12)) {
    lines.push(`  ${k}: ${v.length > 200 ? `${v.slice(0, 200)}... (${v.length} chars)` : v}`);
  }
  if (req.raw) {
    const shown = req.raw.subarray(0, PRINTABLE_LIMIT);
    lines.push(
      `  raw bytes (${req.raw.length}${req.raw.length > PRINTABLE_LIMIT ? ', the first ' + PRINTABLE_LIMIT : ''}, base64): ${shown.toString('base64')}`,
    );
  }
  if (req.body) {
    const text = req.body.toString('utf8');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
    const printable = Buffer.from(text, 'utf8').equals(req.body) && !/[\x00-\x08\x0e-\x1f]/.test(text);
    if (req.body.length <= PRINTABLE_LIMIT) {
      lines.push(
        printable
          ? `  body (${req.body.length} bytes): ${text}`
          : `  body (${req.body.length} bytes, base64): ${req.body.toString('base64')}`,
      );
    } else {
      const head = printable ? text.slice(0, 300) : req.body.subarray(0, 225).toString('base64');
      lines.push(`  body (${req.body.length} bytes${printable ? '' : ', base64'}), starts: ${head}...`);
    }
  }
  return lines.join('\n');
}
