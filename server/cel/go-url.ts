// URLs read as Go's net/url reads them, because kube's CEL url library is Go's parser plus a
// few accessors: url(s) must pass url.ParseRequestURI (absolute URLs and absolute paths) and
// is then read by url.Parse (which splits off the fragment). Go's reading differs from the
// WHATWG one in ways policies can see: `https:://host/` is an opaque URL with scheme https and
// no host, hosts are kept as written (no IDNA, no case folding), paths are not normalised
// (`/a/../b` stays), ports are any digits, and the path keeps the escaping it was written in
// when that escaping is valid.
//
// Strings are handled as UTF-8 bytes, as Go handles them.

export interface GoURL {
  scheme: string;
  opaque: string;
  /** userinfo as written (validated) or undefined when there is none */
  user?: { username: string; password?: string };
  host: string;
  path: string;
  rawPath: string;
  omitHost: boolean;
  forceQuery: boolean;
  rawQuery: string;
  fragment: string;
  rawFragment: string;
}

/** Go's *url.Error: `parse "<url>": <reason>` */
export class GoURLError extends Error {}

type Mode = 'path' | 'host' | 'zone' | 'userPassword' | 'queryComponent' | 'fragment';

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

const isAlnum = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
const unhex = (c: number) => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10);
const ch = (s: string) => s.charCodeAt(0);
const isControl = (c: string) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;

function shouldEscape(c: number, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  const s = String.fromCharCode(c);
  if ((mode === 'host' || mode === 'zone') && `!$&'()*+,;=:[]<>"`.includes(s)) return false;
  if ('-_.~'.includes(s)) return false;
  if ('$&+,/:;=?@'.includes(s)) {
    switch (mode) {
      case 'path':
        return s === '?';
      case 'userPassword':
        return '@/?:'.includes(s);
      case 'queryComponent':
        return true;
      case 'fragment':
        return false;
    }
  }
  if (mode === 'fragment' && '!()*'.includes(s)) return false;
  return true;
}

/** Go's %q for the strings in its error texts (printable ASCII as is) */
const goQuote = (s: string) => JSON.stringify(s);

function unescape(s: string, mode: Mode): string {
  const b = utf8.encode(s);
  const out: number[] = [];
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    if (c === ch('%')) {
      if (i + 2 >= b.length || !isHex(b[i + 1]!) || !isHex(b[i + 2]!)) {
        throw new Error(`invalid URL escape ${goQuote(fromUtf8.decode(b.slice(i, i + 3)))}`);
      }
      const v = (unhex(b[i + 1]!) << 4) | unhex(b[i + 2]!);
      const written = fromUtf8.decode(b.slice(i, i + 3));
      // a host may %-encode only non-ASCII bytes (and %25 in an IPv6 zone)
      if (mode === 'host' && unhex(b[i + 1]!) < 8 && written !== '%25') throw new Error(`invalid URL escape ${goQuote(written)}`);
      if (mode === 'zone' && written !== '%25' && v !== 0x20 && shouldEscape(v, 'host'))
        throw new Error(`invalid URL escape ${goQuote(written)}`);
      out.push(v);
      i += 3;
      continue;
    }
    if ((mode === 'host' || mode === 'zone') && c < 0x80 && shouldEscape(c, mode)) {
      throw new Error(`invalid character ${goQuote(String.fromCharCode(c))} in host name`);
    }
    out.push(c === ch('+') && mode === 'queryComponent' ? 0x20 : c);
    i++;
  }
  return fromUtf8.decode(Uint8Array.from(out));
}

function escape(s: string, mode: Mode): string {
  let out = '';
  for (const c of utf8.encode(s)) {
    out += shouldEscape(c, mode) ? `%${c.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(c);
  }
  return out;
}

function validEncoded(s: string, mode: Mode): boolean {
  for (const c of utf8.encode(s)) {
    if (`!$&'()*+,;=:@[]%`.includes(String.fromCharCode(c))) continue;
    if (shouldEscape(c, mode)) return false;
  }
  return true;
}

const validOptionalPort = (port: string) => port === '' || /^:[0-9]*$/.test(port);

function validUserinfo(s: string): boolean {
  return /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);
}

function getScheme(raw: string): [scheme: string, rest: string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new Error('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new Error("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${goQuote(colonPort)} after host`);
    // RFC 6874: %25 introduces a zone, which may use nearly any %-encoding
    const zone = host.slice(0, close).indexOf('%25');
    if (zone >= 0)
      return unescape(host.slice(0, zone), 'host') + unescape(host.slice(zone, close), 'zone') + unescape(host.slice(close), 'host');
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && !validOptionalPort(host.slice(colon))) throw new Error(`invalid port ${goQuote(host.slice(colon))} after host`);
  }
  return unescape(host, 'host');
}

function parseAuthority(authority: string): { user?: GoURL['user']; host: string } {
  const at = authority.lastIndexOf('@');
  const host = parseHost(authority.slice(at + 1));
  if (at < 0) return { host };
  const userinfo = authority.slice(0, at);
  if (!validUserinfo(userinfo)) throw new Error('net/url: invalid userinfo');
  const colon = userinfo.indexOf(':');
  if (colon < 0) return { user: { username: unescape(userinfo, 'userPassword') }, host };
  return {
    user: { username: unescape(userinfo.slice(0, colon), 'userPassword'), password: unescape(userinfo.slice(colon + 1), 'userPassword') },
    host,
  };
}

/** the decoded text and, when the written escaping differs from Go's default, the written text */
function decodeWithRaw(written: string, mode: Mode): [decoded: string, raw: string] {
  const decoded = unescape(written, mode);
  return [decoded, escape(decoded, mode) === written ? '' : written];
}

function parse(raw: string, viaRequest: boolean): GoURL {
  if ([...raw].some(isControl)) throw new Error('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new Error('empty url');
  const u: GoURL = {
    scheme: '',
    opaque: '',
    host: '',
    path: '',
    rawPath: '',
    omitHost: false,
    forceQuery: false,
    rawQuery: '',
    fragment: '',
    rawFragment: '',
  };
  if (raw === '*') return { ...u, path: '*' };
  let [scheme, rest] = getScheme(raw);
  u.scheme = scheme.toLowerCase();
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    u.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) [rest, u.rawQuery] = [rest.slice(0, q), rest.slice(q + 1)];
  }
  if (!rest.startsWith('/')) {
    // a rootless path after a scheme is opaque (RFC 3986)
    if (u.scheme !== '') return { ...u, opaque: rest };
    if (viaRequest) throw new Error('invalid URI for request');
    if (rest.split('/', 1)[0]!.includes(':')) throw new Error('first path segment in URL cannot contain colon');
  }
  if ((u.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) [authority, rest] = [authority.slice(0, slash), authority.slice(slash)];
    Object.assign(u, parseAuthority(authority));
  } else if (u.scheme !== '' && rest.startsWith('/')) {
    u.omitHost = true;
  }
  [u.path, u.rawPath] = decodeWithRaw(rest, 'path');
  return u;
}

function failed(raw: string, err: unknown): GoURLError {
  return new GoURLError(`parse ${goQuote(raw)}: ${(err as Error).message}`);
}

/** Go's url.ParseRequestURI: an absolute URL or an absolute path, no fragment split */
export function parseRequestURI(raw: string): GoURL {
  try {
    return parse(raw, true);
  } catch (err) {
    throw failed(raw, err);
  }
}

/** Go's url.Parse: any URL reference, the fragment split off at the first '#' */
export function parseURL(raw: string): GoURL {
  const hash = raw.indexOf('#');
  const [rest, frag] = hash < 0 ? [raw, ''] : [raw.slice(0, hash), raw.slice(hash + 1)];
  let u: GoURL;
  try {
    u = parse(rest, false);
  } catch (err) {
    throw failed(rest, err);
  }
  if (frag === '') return u;
  try {
    [u.fragment, u.rawFragment] = decodeWithRaw(frag, 'fragment');
  } catch (err) {
    throw failed(raw, err);
  }
  return u;
}

function splitHostPort(hostPort: string): [host: string, port: string] {
  let [host, port] = [hostPort, ''];
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && validOptionalPort(host.slice(colon))) [host, port] = [host.slice(0, colon), host.slice(colon + 1)];
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

export const hostnameOf = (u: GoURL): string => splitHostPort(u.host)[0];
export const portOf = (u: GoURL): string => splitHostPort(u.host)[1];

function escapedWithRaw(decoded: string, raw: string, mode: Mode): string {
  if (raw !== '' && validEncoded(raw, mode)) {
    try {
      if (unescape(raw, mode) === decoded) return raw;
    } catch {
      // not a valid escaping of the value: escape the value
    }
  }
  return escape(decoded, mode);
}

/** Go's URL.EscapedPath */
export function escapedPath(u: GoURL): string {
  if (u.path === '*' && u.rawPath === '') return '*';
  return escapedWithRaw(u.path, u.rawPath, 'path');
}

/** Go's URL.Query: keys and values unescaped, pairs that do not unescape (or hold ';') left out */
export function queryOf(u: GoURL): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of u.rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    const [k, v] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    let key: string;
    let value: string;
    try {
      key = unescape(k, 'queryComponent');
      value = unescape(v, 'queryComponent');
    } catch {
      continue;
    }
    out.set(key, [...(out.get(key) ?? []), value]);
  }
  return out;
}

function userString(user: NonNullable<GoURL['user']>): string {
  const name = escape(user.username, 'userPassword');
  return user.password === undefined ? name : `${name}:${escape(user.password, 'userPassword')}`;
}

/** Go's URL.String (what kube's URL equality compares) */
export function urlString(u: GoURL): string {
  let out = u.scheme === '' ? '' : `${u.scheme}:`;
  if (u.opaque !== '') out += u.opaque;
  else {
    if ((u.scheme !== '' || u.host !== '' || u.user) && !(u.omitHost && u.host === '' && !u.user)) {
      if (u.host !== '' || u.path !== '' || u.user) out += '//';
      if (u.user) out += `${userString(u.user)}@`;
      if (u.host !== '') out += escape(u.host, 'host');
    }
    const path = escapedPath(u);
    if (path !== '' && path[0] !== '/' && u.host !== '') out += '/';
    if (out === '' && path.split('/', 1)[0]!.includes(':')) out += './';
    out += path;
  }
  if (u.forceQuery || u.rawQuery !== '') out += `?${u.rawQuery}`;
  if (u.fragment !== '') out += `#${escapedWithRaw(u.fragment, u.rawFragment, 'fragment')}`;
  return out;
}
