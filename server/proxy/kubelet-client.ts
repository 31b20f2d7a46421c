// How kapi reaches a kubelet, as kube-apiserver's NodeConnectionInfoGetter: the Node's
// kubelet port (status.daemonEndpoints.kubeletEndpoint.Port, else 10250) at the first of its
// status.addresses in --kubelet-preferred-address-types order, over HTTPS with the
// --kubelet-client-certificate/-key, verified against --kubelet-certificate-authority (not
// verified when no authority is given, as kube does), connecting within --kubelet-timeout.

import type { KubeObject } from '../../storage/interface.js';
import type { RESTResource, RequestContext } from '../registry/rest.js';

export const DEFAULT_KUBELET_PORT = 10250;

export const DEFAULT_PREFERRED_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

export interface KubeletClientConfig {
  certPem?: Buffer;
  keyPem?: Buffer;
  caPem?: Buffer;
  preferredAddressTypes: readonly string[];
  /** connect and TLS handshake deadline (kube: the dialer's timeout) */
  timeoutMs: number;
}

/** TLS settings of one backend connection (absent: plain HTTP) */
export interface BackendTls {
  cert?: Buffer;
  key?: Buffer;
  ca?: Buffer;
  rejectUnauthorized: boolean;
  servername?: string;
}

export interface Backend {
  url: URL;
  tls?: BackendTls;
  connectTimeoutMs: number;
}

export interface KubeletConnection {
  scheme: 'https';
  hostname: string;
  port: string;
}

/** the error kube's GetPreferredNodeAddress gives when no address type matches */
export class NoPreferredAddressError extends Error {}

interface NodeAddress {
  type?: string;
  address?: string;
}

function goAddressList(addresses: NodeAddress[]): string {
  return `[${addresses.map((a) => `{${a.type ?? ''} ${a.address ?? ''}}`).join(' ')}]`;
}

export function preferredNodeAddress(node: KubeObject, preferred: readonly string[]): string {
  const status = (node.status ?? {}) as { addresses?: NodeAddress[] };
  const addresses = Array.isArray(status.addresses) ? status.addresses : [];
  for (const type of preferred) {
    const found = addresses.find((a) => a.type === type && a.address);
    if (found?.address) return found.address;
    // a kubelet that reports no Hostname address is still reachable by its hostname label
    if (type === 'Hostname') {
      const label = node.metadata.labels?.['kubernetes.io/hostname'];
      if (label) return label;
    }
  }
  throw new NoPreferredAddressError(`no preferred addresses found; known addresses: ${goAddressList(addresses)}`);
}

export function kubeletPortOf(node: KubeObject): number {
  const status = (node.status ?? {}) as { daemonEndpoints?: { kubeletEndpoint?: { Port?: unknown } } };
  const port = status.daemonEndpoints?.kubeletEndpoint?.Port;
  return typeof port === 'number' && port > 0 ? port : DEFAULT_KUBELET_PORT;
}

export class KubeletClient {
  constructor(
    readonly config: KubeletClientConfig,
    private readonly nodes: () => RESTResource | undefined,
  ) {}

  /** reads the Node; its NotFound is the caller's answer */
  async connectionInfo(ctx: RequestContext, nodeName: string): Promise<KubeletConnection> {
    const store = this.nodes();
    if (!store) throw new Error('nodes are not served');
    const node = await store.get({ ...ctx, namespace: '' }, nodeName, {});
    return { scheme: 'https', hostname: preferredNodeAddress(node, this.config.preferredAddressTypes), port: String(kubeletPortOf(node)) };
  }

  tls(insecureSkipVerify = false): BackendTls {
    return {
      cert: this.config.certPem,
      key: this.config.keyPem,
      ca: this.config.caPem,
      rejectUnauthorized: !insecureSkipVerify && this.config.caPem !== undefined,
    };
  }

  backend(conn: KubeletConnection, path: string, query: URLSearchParams, insecureSkipVerify = false): Backend {
    const url = new URL(`${conn.scheme}://${joinHostPort(conn.hostname, conn.port)}`);
    url.pathname = path;
    url.search = query.toString();
    return { url, tls: this.tls(insecureSkipVerify), connectTimeoutMs: this.config.timeoutMs };
  }
}

export function joinHostPort(host: string, port: string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
