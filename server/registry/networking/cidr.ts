// CIDR parsing for validation: Go's ParseCIDRSloppy plus apimachinery's strict messages.

import { isIP } from '../validation/values.js';

export interface ParsedCIDR {
  family: 4 | 6;
  prefix: number;
  address: string;
  contains(ip: string): boolean;
}

function ipToBigInt(ip: string): { value: bigint; family: 4 | 6 } | undefined {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) {
    const parts = ip.split('.').map(Number);
    if (parts.some((p) => p > 255)) return undefined;
    return { value: parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n), family: 4 };
  }
  if (!isIP(ip) || !ip.includes(':')) return undefined;
  let s = ip;
  const tail = s.slice(s.lastIndexOf(':') + 1);
  if (tail.includes('.')) {
    const v4 = ipToBigInt(tail);
    if (!v4) return undefined;
    s = s.slice(0, s.lastIndexOf(':') + 1) + ((v4.value >> 16n) & 0xffffn).toString(16) + ':' + (v4.value & 0xffffn).toString(16);
  }
  const [left, right] = s.split('::') as [string, string | undefined];
  const l = left ? left.split(':') : [];
  const r = right ? right.split(':') : [];
  const groups = right === undefined ? l : [...l, ...new Array(8 - l.length - r.length).fill('0'), ...r];
  return { value: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n), family: 6 };
}

export function parseCIDR(s: string): ParsedCIDR | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const addr = s.slice(0, slash);
  const prefixText = s.slice(slash + 1);
  if (!/^\d+$/.test(prefixText)) return undefined;
  const ip = ipToBigInt(addr);
  if (!ip) return undefined;
  const bits = ip.family === 4 ? 32 : 128;
  const prefix = Number(prefixText);
  if (prefix > bits) return undefined;
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  const network = ip.value & mask;
  return {
    family: ip.family,
    prefix,
    address: addr,
    contains(other: string) {
      const o = ipToBigInt(other);
      return !!o && o.family === ip.family && (o.value & mask) === network;
    },
  };
}

/** the legacy (non-strict, 1.33 default) IsValidCIDR message for `s`, or undefined: Go's
 *  sloppy parser accepts leading zeros and host bits */
export function cidrError(s: string): string | undefined {
  return parseCIDR(s) ? undefined : 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';
}
