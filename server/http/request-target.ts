// The request target (HTTP/1.1 request line, HTTP/2 `:path`) read the way Go's net/http reads
// it for kube-apiserver: nothing is resolved or rewritten. `.` and `..` segments, `\` and `//`
// stay as they were sent, so routing, authorization and audit never see a different path than
// the one the client named. Only percent-escapes are decoded, over the whole path at once, so
// `%2F` separates segments exactly like `/` (as URL.Path does in Go).

import { isAscii } from '../machinery/go-quote.js';

export interface RequestTarget {
  /** the path, percent-decoded (Go's URL.Path) */
  path: string;
  /** the query, as sent after the first `?` */
  query: URLSearchParams;
}

const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/;

/** undefined for a target Go's server refuses with a plain 400 (no leading `/`, bad escapes) */
export function parseRequestTarget(raw: string): RequestTarget | undefined {
  if (raw === '*') return { path: '*', query: new URLSearchParams() };
  // absolute-form (`http://host/path`) names the path after its authority
  const authority = ABSOLUTE_FORM.exec(raw);
  const target = authority ? raw.slice(authority[0].length) : raw;
  if (!authority && !target.startsWith('/')) return undefined;
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  const path = percentDecode(rawPath);
  if (path === undefined) return undefined;
  return { path, query: new URLSearchParams(q < 0 ? '' : target.slice(q + 1)) };
}

const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * Decodes `%XX` escapes to bytes and the bytes as UTF-8 (a sequence that is not UTF-8 becomes
 * U+FFFD rather than an error). The target arrives as a latin1 string, one char per byte.
 * Undefined for a `%` not followed by two hex digits, which Go refuses.
 */
export function percentDecode(raw: string): string | undefined {
  // ASCII bytes read as latin1 are already their UTF-8 text
  if (!raw.includes('%')) return isAscii(raw) ? raw : Buffer.from(raw, 'latin1').toString('utf8');
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c !== 0x25) {
      bytes.push(c & 0xff);
      continue;
    }
    const hex = raw.slice(i + 1, i + 3);
    if (!HEX.test(hex)) return undefined;
    bytes.push(parseInt(hex, 16));
    i += 2;
  }
  return Buffer.from(bytes).toString('utf8');
}
