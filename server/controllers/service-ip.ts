// The `kubernetes` Service's ClusterIP: the first usable address of the primary service
// range, as kube-apiserver reserves it (network address + 1).

import net from 'node:net';

export interface ServiceIP {
  ip: string;
  family: 'IPv4' | 'IPv6';
}

/** `cidrs` is `--service-cluster-ip-range`: one CIDR, or two (dual-stack) separated by a comma */
export function firstServiceIP(cidrs: string): ServiceIP {
  const primary = cidrs.split(',')[0]?.trim() ?? '';
  const slash = primary.indexOf('/');
  if (slash < 0) throw new Error(`service cluster IP range ${JSON.stringify(cidrs)} is not a CIDR`);
  const address = primary.slice(0, slash);
  const bits = Number(primary.slice(slash + 1));
  if (net.isIPv4(address)) {
    if (!Number.isInteger(bits) || bits < 0 || bits > 30) throw new Error(`service cluster IP range ${primary} is too small or invalid`);
    const value = address.split('.').reduce((acc, octet) => acc * 256n + BigInt(Number(octet)), 0n);
    return { ip: formatIPv4(networkOf(value, bits, 32) + 1n), family: 'IPv4' };
  }
  if (net.isIPv6(address)) {
    if (!Number.isInteger(bits) || bits < 0 || bits > 126) throw new Error(`service cluster IP range ${primary} is too small or invalid`);
    return { ip: formatIPv6(networkOf(parseIPv6(address), bits, 128) + 1n), family: 'IPv6' };
  }
  throw new Error(`service cluster IP range ${JSON.stringify(cidrs)} is not a CIDR`);
}

export function ipFamily(ip: string): 'IPv4' | 'IPv6' {
  return net.isIPv6(ip) ? 'IPv6' : 'IPv4';
}

function networkOf(value: bigint, prefixBits: number, width: number): bigint {
  const hostBits = BigInt(width - prefixBits);
  return (value >> hostBits) << hostBits;
}

function formatIPv4(v: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 0xffn)).join('.');
}

function parseIPv6(address: string): bigint {
  let text = address;
  // a trailing dotted quad (::ffff:1.2.3.4) becomes two groups
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (net.isIPv4(tail)) {
    const o = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest ? rest.split(':') : [];
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = rest === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...restGroups];
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g, 16)), 0n);
}

/** RFC 5952 text: lowercase, longest run (>1) of zero groups shortened to `::` */
function formatIPv6(v: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((v >> BigInt((7 - i) * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}
