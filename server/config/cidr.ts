// CIDR arithmetic for --service-cluster-ip-range: the first address of the range is the
// `kubernetes` Service's ClusterIP and goes into the serving certificate.

import net from 'node:net';

export interface Cidr {
  /** the network address, canonical text form */
  network: string;
  prefixLength: number;
  family: 4 | 6;
}

function ipToBigInt(ip: string, family: 4 | 6): bigint {
  if (family === 4) {
    return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
  }
  // expand "::" and an embedded dotted IPv4 tail into eight 16-bit groups
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipToBigInt(v4[1]!, 4);
    text = text.slice(0, -v4[1]!.length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail !== undefined ? 8 - headParts.length - tailParts.length : 0;
  const parts = [...headParts, ...Array<string>(fill).fill('0'), ...tailParts];
  return parts.reduce((acc, p) => (acc << 16n) | BigInt(parseInt(p, 16)), 0n);
}

function bigIntToIp(n: bigint, family: 4 | 6): string {
  if (family === 4) {
    return [24n, 16n, 8n, 0n].map((s) => ((n >> s) & 0xffn).toString()).join('.');
  }
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((n >> s) & 0xffffn).toString(16));
  // compress the longest run of zero groups (RFC 5952)
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

/** Parses "10.96.0.0/12" or "fd00::/108". Throws on anything else. */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  if (slash < 0) throw new Error(`invalid CIDR address: ${text}`);
  const ip = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  const family = net.isIP(ip);
  if ((family !== 4 && family !== 6) || !/^\d{1,3}$/.test(bits)) throw new Error(`invalid CIDR address: ${text}`);
  const width = family === 4 ? 32 : 128;
  const prefixLength = Number(bits);
  if (prefixLength > width) throw new Error(`invalid CIDR address: ${text}`);
  const hostBits = BigInt(width - prefixLength);
  const network = (ipToBigInt(ip, family) >> hostBits) << hostBits;
  return { network: bigIntToIp(network, family), prefixLength, family };
}

/** The address after the network address: 10.96.0.0/12 -> 10.96.0.1. */
export function firstAddress(cidr: Cidr): string {
  const width = cidr.family === 4 ? 32 : 128;
  if (cidr.prefixLength >= width) throw new Error(`the range ${cidr.network}/${cidr.prefixLength} has no host addresses`);
  return bigIntToIp(ipToBigInt(cidr.network, cidr.family) + 1n, cidr.family);
}

/** `net.isIP` as a predicate, also accepting the canonical form check for flags. */
export function isIP(text: string): boolean {
  return net.isIP(text) !== 0;
}
