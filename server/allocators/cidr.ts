// CIDR arithmetic for --service-cluster-ip-range: the first address of the range is the
// `kubernetes` Service's ClusterIP and goes into the serving certificate.

import net from 'node:net';
import { bigIntToIp, ipToBigInt, type IPFamily } from './ip.js';

export interface Cidr {
  /** the network address, canonical text form */
  network: string;
  prefixLength: number;
  family: 4 | 6;
}

const familyName = (family: 4 | 6): IPFamily => (family === 4 ? 'IPv4' : 'IPv6');

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
  const network = (ipToBigInt(ip) >> hostBits) << hostBits;
  return { network: bigIntToIp(network, familyName(family)), prefixLength, family };
}

/** The address after the network address: 10.96.0.0/12 -> 10.96.0.1. */
export function firstAddress(cidr: Cidr): string {
  const width = cidr.family === 4 ? 32 : 128;
  if (cidr.prefixLength >= width) throw new Error(`the range ${cidr.network}/${cidr.prefixLength} has no host addresses`);
  return bigIntToIp(ipToBigInt(cidr.network) + 1n, familyName(cidr.family));
}

/** `net.isIP` as a predicate, also accepting the canonical form check for flags. */
export function isIP(text: string): boolean {
  return net.isIP(text) !== 0;
}
