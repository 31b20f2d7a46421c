// Kubernetes' CEL ip, cidr and url libraries:
//   ip:   ip(s), isIP(s), family(), isUnspecified(), isLoopback(),
//         isLinkLocalMulticast(), isLinkLocalUnicast(), isGlobalUnicast(), string(ip)
//   cidr: cidr(s), isCIDR(s), containsIP(ip|string), containsCIDR(cidr|string), ip(), masked(),
//         prefixLength(), string(cidr)
//   url:  url(s), isURL(s), getScheme(), getHost(), getHostname(), getPort(), getEscapedPath(),
//         getQuery()
// Addresses follow Go's net/netip rules as kube's library applies them: no zones, no
// IPv4-mapped IPv6 addresses, IPv6 written canonically by RFC 5952. URLs are read as Go's
// net/url reads them (./go-url.ts).
// ip.isCanonical(s) is in ./format-library.ts (it needs a namespace constant).

import type { Environment } from '@marcbachmann/cel-js';
import { escapedPath, type GoURL, hostnameOf, parseRequestURI, parseURL, portOf, queryOf, urlString } from './go-url.js';
import { parses } from './parses.js';

export class IPValue {
  constructor(readonly bytes: Uint8Array) {}
  get family(): 4 | 6 {
    return this.bytes.length === 4 ? 4 : 6;
  }
  toString(): string {
    return formatIP(this.bytes);
  }
}

export class CIDRValue {
  constructor(
    readonly ip: IPValue,
    readonly prefix: number,
  ) {}
  toString(): string {
    return `${this.ip.toString()}/${this.prefix}`;
  }
}

export class URLValue {
  constructor(readonly url: GoURL) {}
  toString(): string {
    return urlString(this.url);
  }
}

function parseIPv4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    // Go refuses leading zeros (they once meant octal)
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === '0')) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function parseIPv6(s: string): Uint8Array | undefined {
  if (s.includes('%')) return undefined;
  let tail: Uint8Array | undefined;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    tail = parseIPv4(s.slice(lastColon + 1));
    if (!tail) return undefined;
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const total = head.length + rest.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return undefined;
  const all = [...head, ...Array(8 - total).fill('0'), ...rest];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = all[i]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    const n = parseInt(g, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  }
  if (tail) out.set(tail, 12);
  return out;
}

function isV4Mapped(b: Uint8Array): boolean {
  return b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
}

/** the bytes of an address, or an error message as kube's library gives it */
function parseIP(s: string): Uint8Array | string {
  const b = s.includes(':') ? parseIPv6(s) : parseIPv4(s);
  if (!b) return `IP Address "${s}" parse error during conversion from string: ParseAddr("${s}"): unable to parse IP`;
  if (isV4Mapped(b)) return 'IPv4-mapped IPv6 address is not allowed';
  return b;
}

function formatIP(b: Uint8Array): string {
  if (b.length === 4) return [...b].join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  // the longest run of two or more zero groups (leftmost on a tie) becomes ::
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** an address's bytes; throws kube's parse error */
export function parseAddress(s: string): Uint8Array {
  return toIP(s).bytes;
}

function toIP(s: string): IPValue {
  const b = parseIP(s);
  if (typeof b === 'string') throw new Error(b);
  return new IPValue(b);
}

function toCIDR(s: string): CIDRValue {
  const slash = s.indexOf('/');
  const bad = () =>
    new Error(
      `network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("${s}"): bad prefix`,
    );
  if (slash < 0) throw bad();
  const b = parseIP(s.slice(0, slash));
  if (typeof b === 'string') throw new Error(b);
  const len = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(len) || (len.length > 1 && len[0] === '0')) throw bad();
  const prefix = Number(len);
  if (prefix > b.length * 8) throw bad();
  return new CIDRValue(new IPValue(b), prefix);
}

function masked(c: CIDRValue): CIDRValue {
  const out = new Uint8Array(c.ip.bytes);
  for (let bit = c.prefix; bit < out.length * 8; bit++) out[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return new CIDRValue(new IPValue(out), c.prefix);
}

function containsIP(c: CIDRValue, ip: IPValue): boolean {
  if (ip.bytes.length !== c.ip.bytes.length) return false;
  for (let bit = 0; bit < c.prefix; bit++) {
    const m = 0x80 >> (bit & 7);
    if ((c.ip.bytes[bit >> 3]! & m) !== (ip.bytes[bit >> 3]! & m)) return false;
  }
  return true;
}

const containsCIDR = (c: CIDRValue, o: CIDRValue) => o.prefix >= c.prefix && containsIP(c, o.ip);

/** kube's url(): the string must be an absolute URL or path (Go's ParseRequestURI), and is
 *  then read with Go's Parse, which also splits off a fragment */
function toURL(s: string): URLValue {
  try {
    parseRequestURI(s);
    return new URLValue(parseURL(s));
  } catch (err) {
    throw new Error(`URL parse error during conversion from string: ${(err as Error).message}`);
  }
}

export function registerNetworkLibraries(env: Environment): Environment {
  return (
    env
      .registerType('net.IP', IPValue)
      .registerType('net.CIDR', CIDRValue)
      .registerType('net.URL', URLValue)
      // equality is by value, as kube's types define it
      .registerOperator('net.IP == net.IP', (a: IPValue, b: IPValue) => a.toString() === b.toString())
      .registerOperator('net.CIDR == net.CIDR', (a: CIDRValue, b: CIDRValue) => a.toString() === b.toString())
      .registerOperator('net.URL == net.URL', (a: URLValue, b: URLValue) => a.toString() === b.toString())
      .registerFunction('ip(string): net.IP', toIP)
      .registerFunction('isIP(string): bool', (s: string) => parses(() => toIP(s)))
      .registerFunction('string(net.IP): string', (ip: IPValue) => ip.toString())
      .registerFunction('net.IP.family(): int', (ip: IPValue) => BigInt(ip.family))
      .registerFunction('net.IP.isUnspecified(): bool', (ip: IPValue) => ip.bytes.every((x) => x === 0))
      .registerFunction('net.IP.isLoopback(): bool', (ip: IPValue) =>
        ip.family === 4 ? ip.bytes[0] === 127 : ip.bytes.slice(0, 15).every((x) => x === 0) && ip.bytes[15] === 1,
      )
      .registerFunction('net.IP.isLinkLocalMulticast(): bool', (ip: IPValue) =>
        ip.family === 4
          ? ip.bytes[0] === 224 && ip.bytes[1] === 0 && ip.bytes[2] === 0
          : ip.bytes[0] === 0xff && (ip.bytes[1]! & 0x0f) === 0x02,
      )
      .registerFunction('net.IP.isLinkLocalUnicast(): bool', (ip: IPValue) =>
        ip.family === 4 ? ip.bytes[0] === 169 && ip.bytes[1] === 254 : ip.bytes[0] === 0xfe && (ip.bytes[1]! & 0xc0) === 0x80,
      )
      .registerFunction('net.IP.isGlobalUnicast(): bool', (ip: IPValue) => {
        const b = ip.bytes;
        if (b.every((x) => x === 0)) return false;
        if (ip.family === 4) return !(b[0] === 127 || b[0]! >= 224 || (b[0] === 169 && b[1] === 254));
        const loopback = b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
        return !(loopback || b[0] === 0xff || (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80));
      })
      .registerFunction('cidr(string): net.CIDR', toCIDR)
      .registerFunction('isCIDR(string): bool', (s: string) => parses(() => toCIDR(s)))
      .registerFunction('string(net.CIDR): string', (c: CIDRValue) => c.toString())
      .registerFunction('net.CIDR.containsIP(net.IP): bool', containsIP)
      .registerFunction('net.CIDR.containsIP(string): bool', (c: CIDRValue, s: string) => containsIP(c, toIP(s)))
      .registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', containsCIDR)
      .registerFunction('net.CIDR.containsCIDR(string): bool', (c: CIDRValue, s: string) => containsCIDR(c, toCIDR(s)))
      .registerFunction('net.CIDR.ip(): net.IP', (c: CIDRValue) => c.ip)
      .registerFunction('net.CIDR.masked(): net.CIDR', masked)
      .registerFunction('net.CIDR.prefixLength(): int', (c: CIDRValue) => BigInt(c.prefix))
      .registerFunction('url(string): net.URL', toURL)
      .registerFunction('isURL(string): bool', (s: string) => parses(() => parseRequestURI(s)))
      .registerFunction('net.URL.getScheme(): string', (u: URLValue) => u.url.scheme)
      .registerFunction('net.URL.getHost(): string', (u: URLValue) => u.url.host)
      .registerFunction('net.URL.getHostname(): string', (u: URLValue) => hostnameOf(u.url))
      .registerFunction('net.URL.getPort(): string', (u: URLValue) => portOf(u.url))
      .registerFunction('net.URL.getEscapedPath(): string', (u: URLValue) => escapedPath(u.url))
      .registerFunction('net.URL.getQuery(): map<string, list<string>>', (u: URLValue) => queryOf(u.url))
  );
}
