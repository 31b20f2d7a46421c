// The address this replica tells others (the `kubernetes` Service's endpoints) to reach it
// at. kube-apiserver's rule: --advertise-address, else --bind-address unless it is a
// wildcard, else an address of this host (we take the first non-internal interface
// address of the bind address's family, falling back to loopback).

import os from 'node:os';
import net from 'node:net';

export function resolveAdvertiseAddress(advertiseAddress: string, bindAddress: string): string {
  if (advertiseAddress !== '') return advertiseAddress;
  if (bindAddress !== '0.0.0.0' && bindAddress !== '::') return bindAddress;
  const wantV6 = bindAddress === '::';
  const candidates: string[] = [];
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.internal) continue;
      if (a.family === 'IPv4') candidates.push(a.address);
      else if (wantV6 && !a.address.startsWith('fe80:')) candidates.push(a.address);
    }
  }
  const v4 = candidates.find((c) => net.isIPv4(c));
  return v4 ?? candidates[0] ?? '127.0.0.1';
}
