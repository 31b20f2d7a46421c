// <data-dir>/admin.kubeconfig: cluster `kapi` (kapi's serving CA embedded), user
// `kubernetes-admin` (its client certificate and key embedded), one context, current. So
// `kubectl --kubeconfig data/admin.kubeconfig get ns` works with nothing else at hand.

import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** https://host:port */
  server: string;
  caPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  clusterName?: string;
  userName?: string;
}

export interface Kubeconfig {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
  preferences: Record<string, never>;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** The address a client on this machine should use: the bind address unless it is a wildcard. */
export function localServerURL(bindAddress: string, port: number): string {
  let host = bindAddress === '0.0.0.0' || bindAddress === '::' || bindAddress === '' ? '127.0.0.1' : bindAddress;
  if (net.isIPv6(host)) host = `[${host}]`;
  return `https://${host}:${port}`;
}

export function buildKubeconfig(opts: KubeconfigOptions): Kubeconfig {
  const cluster = opts.clusterName ?? 'kapi';
  const user = opts.userName ?? 'kubernetes-admin';
  const context = `${user}@${cluster}`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: opts.server, 'certificate-authority-data': b64(opts.caPem) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(opts.clientCertPem), 'client-key-data': b64(opts.clientKeyPem) } }],
    contexts: [{ name: context, context: { cluster, user } }],
    'current-context': context,
    preferences: {},
  };
}

/** Writes the kubeconfig (mode 0600: it holds a private key) via a temporary file and rename. */
export function writeKubeconfig(file: string, opts: KubeconfigOptions): void {
  // the data dir may not exist yet: with --etcd-servers and --cert-dir nothing else creates it
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, stringify(buildKubeconfig(opts)), { mode: 0o600 });
  renameSync(tmp, file);
}
