// The `kubernetes` Service's ClusterIP: the first usable address of the primary service
// range, as kube-apiserver reserves it (network address + 1).

import net from 'node:net';
import { firstAddress, parseCidr } from '../allocators/cidr.js';

export interface ServiceIP {
  ip: string;
  family: 'IPv4' | 'IPv6';
}

/** `cidrs` is `--service-cluster-ip-range`: one CIDR, or two (dual-stack) separated by a comma */
export function firstServiceIP(cidrs: string): ServiceIP {
  const cidr = parseCidr(cidrs.split(',')[0]?.trim() ?? '');
  return { ip: firstAddress(cidr), family: cidr.family === 6 ? 'IPv6' : 'IPv4' };
}

export function ipFamily(ip: string): 'IPv4' | 'IPv6' {
  return net.isIPv6(ip) ? 'IPv6' : 'IPv4';
}
