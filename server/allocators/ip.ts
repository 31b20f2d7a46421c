// IP addresses as bigints, and the service range a ClusterIP is taken from: which addresses
// of a CIDR can be handed out (not the network address; not the IPv4 broadcast address), and
// where the band reserved for requested addresses ends (KEP-3070: dynamic allocation prefers
// the upper part of the range so that well-known static addresses stay free).

import net from 'node:net';
import { randomBytes } from 'node:crypto';

export type IPFamily = 'IPv4' | 'IPv6';

export function familyOf(ip: string): IPFamily | undefined {
  const v = net.isIP(ip);
  return v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : undefined;
}

export function otherFamily(f: IPFamily): IPFamily {
  return f === 'IPv4' ? 'IPv6' : 'IPv4';
}

const widthOf = (f: IPFamily): number => (f === 'IPv4' ? 32 : 128);

/** the numeric value of a valid IP address (throws on anything else) */
export function ipToBigInt(ip: string): bigint {
  const family = familyOf(ip);
  if (!family) throw new Error(`invalid IP address: ${ip}`);
  if (family === 'IPv4') return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
  let text = ip.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipToBigInt(v4[1]!);
    text = text.slice(0, -v4[1]!.length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const fill = tail !== undefined ? 8 - headParts.length - tailParts.length : 0;
  const groups = [...headParts, ...Array<string>(fill).fill('0'), ...tailParts];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** the canonical text of an address (dotted quad; RFC 5952 for IPv6) */
export function bigIntToIp(n: bigint, family: IPFamily): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => ((n >> s) & 0xffn).toString()).join('.');
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((n >> s) & 0xffffn).toString(16));
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** the canonical text of a valid address: the name of its IPAddress object */
export function canonicalIP(ip: string): string {
  const family = familyOf(ip);
  if (!family) throw new Error(`invalid IP address: ${ip}`);
  return bigIntToIp(ipToBigInt(ip), family);
}

/** a uniformly chosen bigint in [0, n) (n > 0) */
export function randomBelow(n: bigint): bigint {
  if (n <= 0n) throw new Error('randomBelow: empty range');
  const bytes = Math.ceil(n.toString(16).length / 2) + 8;
  const r = BigInt('0x' + randomBytes(bytes).toString('hex'));
  return r % n;
}

/** A contiguous run of addresses [first, last]. */
export interface Band {
  first: bigint;
  last: bigint;
}

export const bandSize = (b: Band): bigint => b.last - b.first + 1n;

/** min(max(16, size/16), 256) addresses at the bottom are kept for requested IPs first */
function rangeOffset(cidrSize: bigint): bigint {
  if (cidrSize < 16n) return 0n;
  const offset = cidrSize / 16n;
  if (offset < 16n) return 16n;
  if (offset > 256n) return 256n;
  return offset;
}

export class ServiceIPRange {
  readonly family: IPFamily;
  /** e.g. `10.96.0.0/12`, as kube prints the range in its errors */
  readonly cidr: string;
  readonly network: bigint;
  readonly prefixLength: number;
  /** the first and last address that may be handed out */
  readonly first: bigint;
  readonly last: bigint;
  /** where the upper (dynamic-first) band starts */
  readonly offsetAddress: bigint;

  constructor(cidrText: string) {
    const slash = cidrText.indexOf('/');
    const ip = slash < 0 ? '' : cidrText.slice(0, slash);
    const bits = slash < 0 ? '' : cidrText.slice(slash + 1);
    const family = familyOf(ip);
    if (!family || !/^\d{1,3}$/.test(bits)) throw new Error(`invalid CIDR address: ${cidrText}`);
    const width = widthOf(family);
    const prefixLength = Number(bits);
    if (prefixLength > width) throw new Error(`invalid CIDR address: ${cidrText}`);
    if (family === 'IPv6' && prefixLength < 64) {
      throw new Error(`shortest allowed prefix length for service CIDR is 64, got ${prefixLength}`);
    }
    const hostBits = BigInt(width - prefixLength);
    this.family = family;
    this.prefixLength = prefixLength;
    this.network = (ipToBigInt(ip) >> hostBits) << hostBits;
    this.cidr = `${bigIntToIp(this.network, family)}/${prefixLength}`;
    const size = 1n << hostBits;
    const broadcast = this.network + size - 1n;
    this.first = this.network + 1n;
    this.last = family === 'IPv4' ? broadcast - 1n : broadcast;
    if (this.last < this.first) throw new Error(`the range ${this.cidr} has no addresses to allocate`);
    this.offsetAddress = this.first + rangeOffset(size);
    if (this.offsetAddress > this.last) this.offsetAddress = this.first;
  }

  /** the network address: what a dry run that would allocate shows (as kube-apiserver does) */
  get networkAddress(): string {
    return bigIntToIp(this.network, this.family);
  }

  /** inside the CIDR at all (network and broadcast included) */
  containsPrefix(ip: bigint): boolean {
    const width = widthOf(this.family);
    const hostBits = BigInt(width - this.prefixLength);
    return ip >> hostBits === this.network >> hostBits;
  }

  /** an address that may be allocated */
  contains(ip: bigint): boolean {
    return ip >= this.first && ip <= this.last;
  }

  /** dynamic allocation tries the upper band first, then the lower one */
  bands(): Band[] {
    const upper: Band = { first: this.offsetAddress, last: this.last };
    if (this.offsetAddress === this.first) return [upper];
    return [upper, { first: this.first, last: this.offsetAddress - 1n }];
  }

  format(ip: bigint): string {
    return bigIntToIp(ip, this.family);
  }
}
