// Hostile framing: whole HTTP/1.1 exchanges and HTTP/2 frame sequences written byte for byte
// onto a TLS connection, below what any HTTP client library would send. A replica must answer
// what it can parse, refuse or close what it cannot, and never crash or hang on either.

import {
  CONNECTION_PREFACE,
  ErrorCode,
  Flag,
  FRAME_HEADER_LENGTH,
  FrameType,
  frame,
  rstStreamFrame,
  settingsFrame,
  writeFrameHeader,
} from '../../storage/etcd/h2-frames.js';
import { encodeLiteralNewName, integerBytes } from '../../storage/etcd/hpack.js';
import type { FuzzTargets } from './cases.js';
import { mutateBytes, toJsonText } from './json-text.js';
import { validObject, type FuzzResource } from './objects.js';
import type { Prng } from './prng.js';
import type { FuzzRequest } from './request.js';

const CRLF = '\r\n';

interface Exchange {
  method: string;
  path: string;
  headers: [string, string][];
  body?: Buffer;
}

/** a request kapi would serve as it is: every write a dry run of a fresh object or the target */
function validExchange(rng: Prng, t: FuzzTargets): Exchange {
  const resource = rng.pick<FuzzResource>(['configmaps', 'secrets']);
  const collection = `/api/v1/namespaces/${t.namespace}/${resource}`;
  const headers: [string, string][] = [
    ['Host', 'kapi'],
    ['Accept', 'application/json'],
  ];
  switch (rng.int(0, 4)) {
    case 0:
      return { method: 'GET', path: `${collection}/${t.target}`, headers };
    case 1:
      return { method: 'GET', path: `${collection}?watch=1&timeoutSeconds=1`, headers };
    case 2:
      return { method: 'GET', path: rng.pick(['/healthz', '/api', '/version', '/openapi/v2']), headers };
    case 3: {
      const body = Buffer.from(toJsonText(validObject(resource, `fuzz-${rng.string(8)}`, undefined, rng)));
      headers.push(['Content-Type', 'application/json']);
      return { method: 'POST', path: `${collection}?dryRun=All`, headers, body };
    }
    default: {
      const body = Buffer.from(JSON.stringify({ metadata: { labels: { fuzz: rng.string(4) } } }));
      headers.push(['Content-Type', 'application/merge-patch+json']);
      return { method: 'PATCH', path: `${collection}/${t.target}?dryRun=All`, headers, body };
    }
  }
}

function head(x: Exchange, requestLine = `${x.method} ${x.path} HTTP/1.1`, eol = CRLF): string {
  return `${requestLine}${eol}${x.headers.map(([k, v]) => `${k}: ${v}${eol}`).join('')}${eol}`;
}

/** `x` with `extra` headers after its own */
function withHeaders(x: Exchange, ...extra: [string, string][]): Exchange {
  return { ...x, headers: [...x.headers, ...extra] };
}

function withLength(x: Exchange): Buffer {
  const body = x.body ?? Buffer.alloc(0);
  const h = x.body ? withHeaders(x, ['Content-Length', String(body.length)]) : x;
  return Buffer.concat([Buffer.from(head(h), 'latin1'), body]);
}

/** the body in chunks of the given size lines (a size line may lie about its chunk) */
function chunked(body: Buffer, sizeLines: string[]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const line of sizeLines) {
    const n = Math.min(Math.max(Number.parseInt(line, 16) || 0, 0), body.length - at);
    parts.push(Buffer.from(`${line}${CRLF}`, 'latin1'), body.subarray(at, at + n), Buffer.from(CRLF));
    at += n;
  }
  return Buffer.concat(parts);
}

function hostileSizeLine(rng: Prng): string {
  return rng.pick([
    'ffffffffffffffffffff',
    '7fffffffffffffff',
    '-1',
    'zz',
    '0x10',
    ' 5',
    '5 ',
    `1;${'x'.repeat(rng.size(200_000))}`,
    `1;a="${'"'.repeat(rng.int(1, 50))}`,
    '',
    '1\n',
    '\u0000',
  ]);
}

/** one HTTP/1.1 request broken at its framing; `how` names the break */
function hostileHttp1(rng: Prng, t: FuzzTargets): { bytes: Buffer; how: string; x: Exchange } {
  const x = validExchange(rng, t);
  const body = x.body ?? Buffer.from('{}');
  switch (rng.int(0, 11)) {
    case 0:
      return {
        how: 'length-and-chunked',
        x,
        bytes: Buffer.concat([
          Buffer.from(head(withHeaders(x, ['Content-Length', String(rng.int(0, 40))], ['Transfer-Encoding', 'chunked'])), 'latin1'),
          chunked(body, [body.length.toString(16), '0']),
          Buffer.from(CRLF),
        ]),
      };
    case 1: {
      const lines = [body.length.toString(16)];
      lines.splice(rng.int(0, 1), 0, hostileSizeLine(rng));
      return {
        how: 'chunk-size',
        x,
        bytes: Buffer.concat([
          Buffer.from(
            head({
              ...x,
              headers: [
                ...x.headers,
                ['Transfer-Encoding', rng.pick(['chunked', 'gzip, chunked', 'chunked, chunked', 'identity', 'Chunked'])],
              ],
            }),
            'latin1',
          ),
          chunked(body, lines),
          Buffer.from(`0${CRLF}${rng.bool() ? `X-Trailer: ${rng.string(rng.size(10_000))}${CRLF}` : ''}${CRLF}`, 'latin1'),
        ]),
      };
    }
    case 2: {
      const lengths = rng.pick([
        [String(body.length), String(body.length + 1)],
        [`${body.length}, ${body.length}`],
        [`${body.length}, 0`],
        ['-1'],
        ['99999999999999999999'],
        [`+${body.length}`],
        [`${body.length}.0`],
      ]);
      return {
        how: 'content-length',
        x,
        bytes: Buffer.concat([
          Buffer.from(head(withHeaders(x, ...lengths.map((l): [string, string] => ['Content-Length', l]))), 'latin1'),
          body,
        ]),
      };
    }
    case 3: {
      const line = rng.pick([
        `G E T ${x.path} HTTP/1.1`,
        `get ${x.path} HTTP/1.1`,
        `${x.method} ${x.path} HTTP/1.2`,
        `${x.method} ${x.path} HTTP/2.0`,
        `${x.method} ${x.path} HTTP/0.9`,
        `${x.method} ${x.path}`,
        `${x.method}  ${x.path}  HTTP/1.1`,
        `${x.method}\t${x.path}\tHTTP/1.1`,
        `${x.method} https://kapi${x.path} HTTP/1.1`,
        `${x.method} * HTTP/1.1`,
        `${x.method}  HTTP/1.1`,
        `${x.method} /${'a/'.repeat(rng.size(100_000))} HTTP/1.1`,
        `CONNECT kapi:443 HTTP/1.1`,
        `PRI * HTTP/2.0`,
        rng.string(rng.int(1, 64), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ /:.?%\t'),
      ]);
      return { how: 'request-line', x, bytes: Buffer.concat([Buffer.from(head(x, line), 'latin1'), x.body ?? Buffer.alloc(0)]) };
    }
    case 4: {
      const bad = rng.pick<[string, string][]>([
        [['X-Folded', `a${CRLF}  continued`]],
        [['Accept ', 'application/json']],
        [['', 'no-name']],
        [['X-Nul', 'a\u0000b']],
        [['X-Cr', 'a\rb']],
        [
          ['Host', 'a'],
          ['Host', 'b'],
        ],
        [['X\u00ffHigh', 'v']],
        [['X-Long', 'v'.repeat(rng.size(2_000_000))]],
        Array.from({ length: rng.size(20_000) }, (_, i): [string, string] => [`X-H${i}`, 'v']),
      ]);
      const headers = [...x.headers.filter(([k]) => rng.bool(0.8) || k !== 'Host'), ...bad];
      return { how: 'header-syntax', x, bytes: withLength({ ...x, headers }) };
    }
    case 5:
      return {
        how: 'bare-lf',
        x,
        bytes: Buffer.concat([
          Buffer.from(head(withHeaders(x, ['Content-Length', String(x.body?.length ?? 0)]), undefined, '\n'), 'latin1'),
          x.body ?? Buffer.alloc(0),
        ]),
      };
    case 6: {
      // the body ends early and the connection half-closes: the replica must not wait forever
      const whole = withLength({ ...x, body });
      return { how: 'truncated', x, bytes: whole.subarray(0, rng.int(1, whole.length - 1)) };
    }
    case 7:
      return {
        how: 'pipelined',
        x,
        bytes: Buffer.concat([withLength(x), rng.bool() ? mutateBytes(withLength(validExchange(rng, t)), rng) : rng.bytes(rng.size(4096))]),
      };
    case 8:
      return {
        how: 'expect',
        x,
        bytes: withLength({ ...withHeaders(x, ['Expect', rng.pick(['100-continue', '200-ok', '100-continue, 100-continue', ''])]), body }),
      };
    case 9: {
      const upgrade = rng.pick<[string, string][]>([
        [
          ['Upgrade', 'websocket'],
          ['Sec-WebSocket-Version', '13'],
          ['Sec-WebSocket-Key', rng.pick(['', 'not base64', 'dGhlIHNhbXBsZSBub25jZQ=='])],
          ['Sec-WebSocket-Protocol', rng.pick(['v5.channel.k8s.io', 'base64.channel.k8s.io', ',,,'])],
        ],
        [
          ['Upgrade', 'h2c'],
          ['HTTP2-Settings', rng.pick(['', 'AAMAAABkAARAAAAAAAIAAAAA', '!!!'])],
        ],
        [
          ['Upgrade', 'SPDY/3.1'],
          ['X-Stream-Protocol-Version', rng.pick(['v4.channel.k8s.io', 'x'])],
        ],
      ]);
      const path = rng.bool() ? `/api/v1/namespaces/${t.namespace}/pods/${t.target}/exec?command=true&stdout=1` : x.path;
      return { how: 'upgrade', x, bytes: withLength({ ...withHeaders(x, ['Connection', 'Upgrade'], ...upgrade), path }) };
    }
    case 10:
      return {
        how: 'h2-preface',
        x,
        bytes: Buffer.concat([CONNECTION_PREFACE, rng.bytes(rng.size(2048))]),
      };
    default:
      return { how: 'mutated', x, bytes: mutateBytes(withLength(x), rng) };
  }
}

// --- HTTP/2 -------------------------------------------------------------------------------

/** a frame whose length field says `lengthField`, whatever its payload's length */
function lyingFrame(type: number, flags: number, stream: number, payload: Buffer, lengthField: number): Buffer {
  const out = Buffer.alloc(FRAME_HEADER_LENGTH + payload.length);
  writeFrameHeader(out, 0, lengthField & 0xffffff, type, flags, stream);
  payload.copy(out, FRAME_HEADER_LENGTH);
  return out;
}

/** literal header fields without indexing, names and values as raw octets (no Huffman) */
function hpackBlock(fields: [string, string][]): Buffer {
  return Buffer.concat(fields.map(([name, value]) => encodeLiteralNewName(name, value)));
}

function requestBlock(x: Exchange): Buffer {
  return hpackBlock([
    [':method', x.method],
    [':scheme', 'https'],
    [':authority', 'kapi'],
    [':path', x.path],
    ...x.headers.filter(([k]) => k !== 'Host').map(([k, v]): [string, string] => [k.toLowerCase(), v]),
  ]);
}

function request(x: Exchange, stream: number): Buffer {
  const endStream = x.body ? 0 : Flag.END_STREAM;
  const frames = [frame(FrameType.HEADERS, Flag.END_HEADERS | endStream, stream, requestBlock(x))];
  if (x.body) frames.push(frame(FrameType.DATA, Flag.END_STREAM, stream, x.body));
  return Buffer.concat(frames);
}

/** an HTTP/2 connection's frames after the preface, broken in one way; `how` names it */
function hostileHttp2(rng: Prng, t: FuzzTargets): { bytes: Buffer; how: string; x: Exchange } {
  const x = validExchange(rng, t);
  const start = [CONNECTION_PREFACE, settingsFrame([])];
  const at = (how: string, ...frames: Buffer[]) => ({ how, x, bytes: Buffer.concat([...start, ...frames]) });
  const count = (max: number) => rng.int(1, max);
  switch (rng.int(0, 11)) {
    case 0: {
      // a header block that never ends: CONTINUATION frames without END_HEADERS
      const block = requestBlock(x);
      const filler = hpackBlock([['x-fill', 'v'.repeat(rng.int(1, 1000))]]);
      const frames = [frame(FrameType.HEADERS, 0, 1, block)];
      for (let i = count(400); i > 0; i--) frames.push(frame(FrameType.CONTINUATION, 0, 1, filler));
      return at('continuation-flood', ...frames);
    }
    case 1: {
      // rapid reset: streams opened and cancelled at once, in the same read as their HEADERS
      // (node hands a stream to kapi a tick later, when it may be closed already), some with
      // expectations, CONNECT, HEAD, or half a body sent
      const frames: Buffer[] = [];
      for (let i = 0, n = count(500); i < n; i++) {
        const id = 1 + 2 * i;
        const variant = rng.int(0, 4);
        const method = variant === 1 ? 'CONNECT' : variant === 2 ? 'HEAD' : variant === 3 ? 'POST' : 'GET';
        const headers =
          variant === 3 ? [...x.headers, ['Expect', rng.pick(['100-continue', 'nothing-else'])] as [string, string]] : x.headers;
        if (variant === 4) {
          frames.push(frame(FrameType.HEADERS, Flag.END_HEADERS, id, requestBlock({ ...x, method: 'POST' })));
          frames.push(frame(FrameType.DATA, 0, id, rng.bytes(rng.size(2048))));
        } else {
          frames.push(request({ ...x, headers, body: undefined, method }, id));
        }
        frames.push(rstStreamFrame(id, ErrorCode.CANCEL));
      }
      return at('rapid-reset', ...frames);
    }
    case 2: {
      const bad = rng.pick<[number, number][]>([
        [[4, 0x80000000]],
        [[5, 100]],
        [[5, 0x1000000]],
        [[2, 2]],
        [[3, 0]],
        [[6, 0xffffffff]],
        [[rng.int(7, 0xffff), rng.int(0, 0xffffffff)]],
        Array.from({ length: count(3000) }, (): [number, number] => [1, rng.int(0, 0xffffffff)]),
      ]);
      return at('settings', settingsFrame(bad), request(x, 1));
    }
    case 3:
      return at(
        'window-update',
        frame(
          FrameType.WINDOW_UPDATE,
          0,
          rng.pick([0, 1]),
          Buffer.from(
            rng.pick([
              [0, 0, 0, 0],
              [0x7f, 0xff, 0xff, 0xff],
              [0x80, 0, 0, 1],
            ]),
          ),
        ),
        request(x, 1),
      );
    case 4: {
      const frames: Buffer[] = [];
      for (let i = count(5000); i > 0; i--) frames.push(frame(FrameType.PING, 0, 0, rng.bytes(8)));
      return at('ping-flood', ...frames);
    }
    case 5:
      return at(
        'priority',
        frame(FrameType.PRIORITY, 0, 1, Buffer.from([0, 0, 0, 1, 16])),
        frame(
          FrameType.HEADERS,
          Flag.END_HEADERS | Flag.END_STREAM | Flag.PRIORITY,
          3,
          Buffer.concat([Buffer.from([0, 0, 0, 3, 16]), requestBlock(x)]),
        ),
      );
    case 6: {
      // a header block of HPACK garbage, or fields no request may have
      const block = rng.bool()
        ? rng.bytes(rng.size(4096))
        : hpackBlock(
            rng.pick<[string, string][]>([
              [[':method', 'GET']],
              [
                [':method', 'GET'],
                [':path', x.path],
                [':path', x.path],
                [':scheme', 'https'],
              ],
              [
                [':method', 'GET'],
                [':scheme', 'https'],
                [':path', ''],
                [':authority', 'kapi'],
              ],
              [
                [':method', 'GET'],
                [':scheme', 'https'],
                [':path', x.path],
                ['connection', 'keep-alive'],
              ],
              [
                [':method', 'GET'],
                [':scheme', 'https'],
                [':path', x.path],
                ['Upper-Case', 'v'],
              ],
              [
                [':status', '200'],
                [':method', 'GET'],
                [':scheme', 'https'],
                [':path', x.path],
              ],
              [
                [':method', 'GET'],
                [':scheme', 'https'],
                [':path', x.path],
                ['te', 'gzip'],
              ],
            ]),
          );
      const block2 = rng.bool(0.3) ? Buffer.concat([Buffer.from(integerBytes(rng.int(0, 1 << 30), 5, 0x20)), block]) : block;
      return at('hpack', frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 1, block2));
    }
    case 7: {
      // DATA beyond the declared length, on a closed or idle stream, or with a lying pad
      const body = x.body ?? Buffer.from('{}');
      const post: Exchange = { ...x, method: 'POST', body };
      const h = frame(
        FrameType.HEADERS,
        Flag.END_HEADERS,
        1,
        requestBlock(withHeaders(post, ['content-length', String(rng.int(0, body.length))])),
      );
      return at(
        'data',
        h,
        rng.pick([
          frame(FrameType.DATA, Flag.END_STREAM, 1, body),
          frame(FrameType.DATA, Flag.PADDED | Flag.END_STREAM, 1, Buffer.concat([Buffer.from([255]), body])),
          frame(FrameType.DATA, 0, 7, body),
          frame(FrameType.DATA, Flag.END_STREAM, 0, body),
        ]),
      );
    }
    case 8:
      // a frame whose length field is not its payload's, or beyond the maximum frame size
      return at(
        'frame-length',
        lyingFrame(rng.int(0, 9), rng.int(0, 255), rng.int(0, 3), rng.bytes(rng.size(64)), rng.pick([0, 16385, 0xffffff, rng.int(0, 100)])),
      );
    case 9:
      return at(
        'goaway',
        request(x, 1),
        frame(FrameType.GOAWAY, 0, 0, Buffer.concat([Buffer.from([0, 0, 0, 1, 0, 0, 0, 2]), rng.bytes(rng.size(1024))])),
        request(x, 3),
      );
    case 10: {
      // stream ids going backwards, even (server-initiated) or reused
      const ids = rng.pick([[3, 1], [2], [1, 1], [0x7fffffff, 1]]);
      return at('stream-ids', ...ids.map((id) => request(x, id)));
    }
    default: {
      const frames: Buffer[] = [];
      for (let i = count(30); i > 0; i--) frames.push(frame(rng.int(0, 12), rng.int(0, 255), rng.int(0, 9), rng.bytes(rng.size(512))));
      return at('random-frames', request(x, 1), ...frames);
    }
  }
}

/** a framing case: raw HTTP/1.1 or raw HTTP/2 after ALPN, always as the admin (client certificate) */
export function framingCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const h2 = rng.bool(0.4);
  const made = h2 ? hostileHttp2(rng, t) : hostileHttp1(rng, t);
  return {
    kind: `framing.${h2 ? 'h2' : 'http1'}.${made.how}`,
    protocol: h2 ? 'raw-h2' : 'raw-http/1.1',
    caller: 'admin',
    method: made.x.method,
    path: made.x.path,
    headers: {},
    raw: made.bytes,
  };
}
