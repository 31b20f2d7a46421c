// Reading a kubeconfig file as a client: the context asked for (else the current one), its
// cluster and user, and the credentials they name, inline (`*-data`, base64) or in files
// relative to the kubeconfig. The webhooks kapi calls (authorization, token authentication,
// audit) and `kapi load` find their server this way.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { parseConfigYaml } from '../request/yaml.js';

export interface KubeconfigTarget {
  server: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecureSkipVerify: boolean;
}

export interface ReadKubeconfigOptions {
  /** the context to use instead of current-context */
  context?: string;
  /** the server to use instead of the cluster's */
  server?: string;
}

type Entry = Record<string, unknown>;

function entries(list: unknown): Entry[] {
  return Array.isArray(list) ? list.filter((e): e is Entry => typeof e === 'object' && e !== null) : [];
}

/** the named entry's `key` object; with no name given, the first entry's */
function named(list: unknown, name: unknown, key: string): Entry | undefined {
  const all = entries(list);
  const found = typeof name === 'string' && name !== '' ? all.find((e) => e.name === name) : all[0];
  const value = found?.[key];
  return typeof value === 'object' && value !== null ? (value as Entry) : undefined;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function material(dir: string, data: unknown, file: unknown): Buffer | undefined {
  if (text(data)) return Buffer.from(data as string, 'base64');
  if (text(file)) return readFileSync(path.resolve(dir, file as string));
  return undefined;
}

export function readKubeconfigTarget(file: string, opts: ReadKubeconfigOptions = {}): KubeconfigTarget {
  const dir = path.dirname(path.resolve(file));
  const doc = parseConfigYaml(readFileSync(file, 'utf8'));
  const kc = (typeof doc === 'object' && doc !== null ? doc : {}) as Entry;
  // client-go's words for what is missing, with the file
  const invalid = (what: string) => new Error(`invalid configuration: ${what} (${file})`);
  const contextName = opts.context || text(kc['current-context']);
  const context = named(kc.contexts, contextName, 'context');
  if (!context) {
    throw invalid(contextName ? `context was not found for specified context: ${contextName}` : 'no configuration has been provided');
  }
  const clusterName = text(context.cluster);
  const cluster = named(kc.clusters, clusterName, 'cluster') ?? {};
  const user = named(kc.users, context.user, 'user') ?? {};
  const server = opts.server || text(cluster.server);
  if (!server)
    throw invalid(clusterName ? `no server found for cluster ${JSON.stringify(clusterName)}` : 'default cluster has no server defined');
  const tokenFile = text(user.tokenFile);
  return {
    server: new URL(server),
    ca: material(dir, cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: material(dir, user['client-certificate-data'], user['client-certificate']),
    key: material(dir, user['client-key-data'], user['client-key']),
    token: text(user.token) ?? (tokenFile ? readFileSync(path.resolve(dir, tokenFile), 'utf8').trim() : undefined),
    insecureSkipVerify: cluster['insecure-skip-tls-verify'] === true,
  };
}

/** node's request function for the kubeconfig's server, with a keep-alive agent that connects
 *  as the kubeconfig says (its CA, client certificate, TLS check) */
export function clientFor(target: KubeconfigTarget): { agent: http.Agent; request: typeof http.request } {
  if (target.server.protocol !== 'https:') return { agent: new http.Agent({ keepAlive: true }), request: http.request };
  const agent = new https.Agent({
    keepAlive: true,
    ca: target.ca,
    cert: target.cert,
    key: target.key,
    rejectUnauthorized: !target.insecureSkipVerify,
  });
  return { agent, request: https.request };
}
