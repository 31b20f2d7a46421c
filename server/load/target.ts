// Where `kapi load` sends its requests: the current context of a kubeconfig (server, CA,
// client certificate or bearer token), and the loopback guard that keeps a load test from
// hitting a real cluster by accident.

import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { parseConfigYaml } from '../request/yaml.js';

export interface Target {
  server: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecureSkipVerify: boolean;
}

interface NamedEntry<T> {
  name: string;
  cluster?: T;
  user?: T;
  context?: T;
}

interface KubeconfigFile {
  'current-context'?: string;
  contexts?: NamedEntry<{ cluster: string; user: string }>[];
  clusters?: NamedEntry<{
    server: string;
    'certificate-authority-data'?: string;
    'certificate-authority'?: string;
    'insecure-skip-tls-verify'?: boolean;
  }>[];
  users?: NamedEntry<{
    'client-certificate-data'?: string;
    'client-key-data'?: string;
    'client-certificate'?: string;
    'client-key'?: string;
    token?: string;
    tokenFile?: string;
  }>[];
}

function material(dir: string, data: string | undefined, file: string | undefined): Buffer | undefined {
  if (data) return Buffer.from(data, 'base64');
  if (file) return readFileSync(path.resolve(dir, file));
  return undefined;
}

/** the kubeconfig's current context (or `context`), resolved to what the client needs */
export function readTarget(kubeconfigPath: string, context?: string, server?: string): Target {
  const dir = path.dirname(path.resolve(kubeconfigPath));
  const kc = parseConfigYaml(readFileSync(kubeconfigPath, 'utf8')) as KubeconfigFile;
  const ctxName = context || kc['current-context'];
  const ctx = kc.contexts?.find((c) => c.name === ctxName)?.context ?? (kc.contexts?.length === 1 ? kc.contexts[0]!.context : undefined);
  if (!ctx) throw new Error(`${kubeconfigPath}: no context ${ctxName ?? '(current-context is unset)'}`);
  const cluster = kc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  const user = kc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  if (!cluster) throw new Error(`${kubeconfigPath}: no cluster ${ctx.cluster}`);
  const token = user.token ?? (user.tokenFile ? readFileSync(path.resolve(dir, user.tokenFile), 'utf8').trim() : undefined);
  return {
    server: new URL(server || cluster.server),
    ca: material(dir, cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: material(dir, user['client-certificate-data'], user['client-certificate']),
    key: material(dir, user['client-key-data'], user['client-key']),
    token,
    insecureSkipVerify: cluster['insecure-skip-tls-verify'] === true,
  };
}

/** 127.0.0.0/8, ::1, localhost: a load test there only hurts this machine */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h.startsWith('::ffff:127.');
  return false;
}
