// An HTTP/1.1 request head (RFC 9112) read from its bytes: the request line, the header fields
// as node's IncomingMessage presents them, and how the body is framed. Strict where request
// smuggling lives: CRLF line ends only, no whitespace before a field's colon, no folded lines,
// no control characters, one Content-Length (or copies of one), and Transfer-Encoding only as
// `chunked` and never beside a Content-Length.

import type { IncomingHttpHeaders } from 'node:http';

export interface RequestHead {
  method: string;
  url: string;
  /** '1.1' or '1.0' */
  httpVersion: string;
  headers: IncomingHttpHeaders;
  /** names as sent and values, alternating */
  rawHeaders: string[];
  /** the body's framing: a length (0: none) or chunked */
  body: { kind: 'length'; length: number } | { kind: 'chunked' };
  /** HTTP/1.1 without `Connection: close`, or HTTP/1.0 with `Connection: keep-alive` */
  keepAlive: boolean;
  /** `Connection: upgrade` with an `Upgrade` field */
  upgrade: boolean;
}

/** why a head cannot be served; `status` is what Go's server answers */
export class HeadError extends Error {
  constructor(
    readonly status: 400 | 431 | 501 | 505,
    message: string,
  ) {
    super(message);
  }
}

/** an RFC 9110 token: a method, a field name */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** control characters other than HTAB, and CR or LF that are not one CRLF line end */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the bytes a request head may not hold
const FORBIDDEN = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n/;
/** a request target: visible characters (and bytes beyond ASCII, as node's parser lets through) */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the bytes a request head may not hold
const TARGET_FORBIDDEN = /[\x00-\x20\x7f]/;
const VERSION = /^HTTP\/(\d)\.(\d)$/;
const DIGITS = /^\d+$/;

/** fields of which node keeps the first and drops repeats */
const SINGLE_VALUED = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** lower-case names of the raw names seen, so the common ones are not lower-cased per request */
const lowerNames = new Map<string, string>();
const LOWER_NAMES_KEPT = 512;

function lowerName(name: string): string {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerNames.size < LOWER_NAMES_KEPT) lowerNames.set(name, lower);
  }
  return lower;
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** `text`: the head without its final CRLF CRLF, as latin1 (one character per byte) */
export function parseRequestHead(text: string): RequestHead {
  if (FORBIDDEN.test(text)) throw new HeadError(400, 'invalid character in the request head');
  const lineEnd = text.indexOf('\r\n');
  const requestLine = lineEnd < 0 ? text : text.slice(0, lineEnd);
  const sp1 = requestLine.indexOf(' ');
  const sp2 = sp1 < 0 ? -1 : requestLine.indexOf(' ', sp1 + 1);
  if (sp1 <= 0 || sp2 < 0 || requestLine.indexOf(' ', sp2 + 1) >= 0) throw new HeadError(400, 'malformed request line');
  const method = requestLine.slice(0, sp1);
  const url = requestLine.slice(sp1 + 1, sp2);
  const version = requestLine.slice(sp2 + 1);
  if (!TOKEN.test(method)) throw new HeadError(400, 'invalid method');
  if (url.length === 0 || TARGET_FORBIDDEN.test(url)) throw new HeadError(400, 'invalid request target');
  const v = VERSION.exec(version);
  if (!v) throw new HeadError(400, 'malformed HTTP version');
  if (v[1] !== '1') throw new HeadError(505, 'unsupported protocol version');
  const httpVersion = v[2] === '0' ? '1.0' : '1.1';

  const headers: IncomingHttpHeaders = {};
  const rawHeaders: string[] = [];
  let contentLength: string | undefined;
  let transferEncoding: string | undefined;
  let connection = '';
  let start = lineEnd < 0 ? text.length : lineEnd + 2;
  while (start < text.length) {
    let end = text.indexOf('\r\n', start);
    if (end < 0) end = text.length;
    if (isOws(text.charCodeAt(start))) throw new HeadError(400, 'folded header line');
    const colon = text.indexOf(':', start);
    if (colon < 0 || colon >= end) throw new HeadError(400, 'header line without a colon');
    const name = text.slice(start, colon);
    if (!TOKEN.test(name)) throw new HeadError(400, 'invalid header name');
    let from = colon + 1;
    let to = end;
    while (from < to && isOws(text.charCodeAt(from))) from++;
    while (to > from && isOws(text.charCodeAt(to - 1))) to--;
    const value = text.slice(from, to);
    rawHeaders.push(name, value);
    const lower = lowerName(name);
    if (lower === 'content-length') {
      if (contentLength !== undefined && contentLength !== value) throw new HeadError(400, 'conflicting Content-Length');
      contentLength = value;
    } else if (lower === 'transfer-encoding') {
      transferEncoding = transferEncoding === undefined ? value : `${transferEncoding}, ${value}`;
    } else if (lower === 'connection') {
      connection = connection ? `${connection},${value}` : value;
    }
    addHeader(headers, lower, value);
    start = end + 2;
  }

  let body: RequestHead['body'] = { kind: 'length', length: 0 };
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) throw new HeadError(400, 'both Transfer-Encoding and Content-Length');
    if (transferEncoding.trim().toLowerCase() !== 'chunked') throw new HeadError(501, 'unsupported transfer encoding');
    if (httpVersion === '1.0') throw new HeadError(400, 'chunked body in HTTP/1.0');
    body = { kind: 'chunked' };
  } else if (contentLength !== undefined) {
    if (!DIGITS.test(contentLength) || contentLength.length > 15) throw new HeadError(400, 'invalid Content-Length');
    body = { kind: 'length', length: Number(contentLength) };
  }
  if (httpVersion === '1.1' && headers.host === undefined) throw new HeadError(400, 'missing required Host header');

  const tokens = connection
    ? connection
        .toLowerCase()
        .split(',')
        .map((t) => t.trim())
    : [];
  const keepAlive = httpVersion === '1.1' ? !tokens.includes('close') : tokens.includes('keep-alive');
  const upgrade = tokens.includes('upgrade') && headers.upgrade !== undefined;
  return { method, url, httpVersion, headers, rawHeaders, body, keepAlive, upgrade };
}

/** adds a field the way node's IncomingMessage does */
function addHeader(headers: IncomingHttpHeaders, name: string, value: string): void {
  const prior = headers[name];
  if (prior === undefined) {
    headers[name] = name === 'set-cookie' ? [value] : value;
    return;
  }
  if (SINGLE_VALUED.has(name)) return;
  if (name === 'set-cookie') (prior as string[]).push(value);
  else headers[name] = `${prior as string}${name === 'cookie' ? '; ' : ', '}${value}`;
}
