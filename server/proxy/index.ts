// The connect subresources as the server builds them from its flags.

import { readFileSync } from 'node:fs';
import type { ResourceResolver } from '../registry/rest.js';
import type { RequestState } from '../request/types.js';
import { createConnectHandler } from './connect.js';
import { DEFAULT_PREFERRED_ADDRESS_TYPES, KubeletClient } from './kubelet-client.js';

export interface KubeletFlags {
  clientCertificate: string;
  clientKey: string;
  certificateAuthority: string;
  preferredAddressTypes: string[];
  timeoutMs: number;
  /** kapi's --allow-loopback-proxy-targets */
  allowLoopbackTargets?: boolean;
}

/** kube-apiserver's validation of the kubelet client flags */
export function checkKubeletFlags(flags: KubeletFlags): void {
  if ((flags.clientCertificate === '') !== (flags.clientKey === '')) {
    throw new Error('--kubelet-client-certificate and --kubelet-client-key must be specified together');
  }
  const known = new Set(DEFAULT_PREFERRED_ADDRESS_TYPES);
  for (const t of flags.preferredAddressTypes) {
    if (!known.has(t)) throw new Error(`--kubelet-preferred-address-types: ${JSON.stringify(t)} is not a valid address type`);
  }
}

export function createKubeletConnect(flags: KubeletFlags, resolver: ResourceResolver): (state: RequestState) => Promise<boolean> {
  checkKubeletFlags(flags);
  const read = (file: string): Buffer | undefined => (file ? readFileSync(file) : undefined);
  const kubelet = new KubeletClient(
    {
      certPem: read(flags.clientCertificate),
      keyPem: read(flags.clientKey),
      caPem: read(flags.certificateAuthority),
      preferredAddressTypes: flags.preferredAddressTypes,
      timeoutMs: flags.timeoutMs,
    },
    () => resolver.lookup('', 'v1', 'nodes'),
  );
  return createConnectHandler({ resolver, kubelet, allowLoopback: flags.allowLoopbackTargets === true });
}
