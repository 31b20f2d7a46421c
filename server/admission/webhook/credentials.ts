// How kapi authenticates to webhooks: the plugins' WebhookAdmissionConfiguration
// (--admission-control-config-file) names a kubeconfig whose users are keyed by the webhook's
// host: `host:port` or `host` exactly, then `*.<parent domain>` wildcards, then `*`. A user
// gives a client certificate, a bearer token or a username and password. Without a match
// the call is anonymous.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfigYaml } from '../../request/yaml.js';

export interface WebhookCredentials {
  cert?: string;
  key?: string;
  /** the Authorization header value */
  authorization?: string;
}

export type CredentialResolver = (hostPort: string, host: string) => WebhookCredentials | undefined;

export const anonymous: CredentialResolver = () => undefined;

type UserEntry = Record<string, unknown>;

function readMaybe(dir: string, file: unknown): string | undefined {
  if (typeof file !== 'string' || !file) return undefined;
  return readFileSync(path.isAbsolute(file) ? file : path.join(dir, file), 'utf8');
}

function credentialsOf(user: UserEntry, dir: string): WebhookCredentials {
  const out: WebhookCredentials = {};
  const data = (k: string) =>
    typeof user[k] === 'string' && user[k] ? Buffer.from(user[k] as string, 'base64').toString('utf8') : undefined;
  out.cert = data('client-certificate-data') ?? readMaybe(dir, user['client-certificate']);
  out.key = data('client-key-data') ?? readMaybe(dir, user['client-key']);
  const token = (typeof user.token === 'string' && user.token) || readMaybe(dir, user.tokenFile)?.trim();
  if (token) out.authorization = `Bearer ${token}`;
  else if (typeof user.username === 'string' && user.username) {
    out.authorization = `Basic ${Buffer.from(`${user.username}:${String(user.password ?? '')}`).toString('base64')}`;
  }
  return out;
}

/** the credential lookup of a plugin configuration; throws with kube's messages */
export function credentialResolverFrom(config: unknown): CredentialResolver {
  if (config === undefined || config === null) return anonymous;
  const c = config as Record<string, unknown>;
  if (c.kind !== undefined && c.kind !== 'WebhookAdmissionConfiguration' && c.kind !== 'WebhookAdmission') {
    throw new Error(`unexpected kind "${String(c.kind)}" in the webhook admission configuration (want WebhookAdmissionConfiguration)`);
  }
  const file = c.kubeConfigFile;
  if (file === undefined || file === '') return anonymous;
  if (typeof file !== 'string' || !path.isAbsolute(file))
    throw new Error(`accessing kubeConfigFile: kubeConfigFile "${String(file)}" must be an absolute file path`);
  let doc: Record<string, unknown>;
  try {
    doc = (parseConfigYaml(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`accessing kubeConfigFile: ${(err as Error).message}`);
  }
  const dir = path.dirname(file);
  const users = new Map<string, WebhookCredentials>();
  for (const u of (Array.isArray(doc.users) ? doc.users : []) as Record<string, unknown>[]) {
    if (typeof u?.name === 'string') users.set(u.name, credentialsOf((u.user ?? {}) as UserEntry, dir));
  }
  return (hostPort, host) => {
    const exact = users.get(hostPort) ?? users.get(host);
    if (exact) return exact;
    for (const name of [hostPort, host]) {
      const steps = name.split('.');
      for (let i = 1; i < steps.length; i++) {
        const wild = users.get(`*.${steps.slice(i).join('.')}`);
        if (wild) return wild;
      }
    }
    return users.get('*');
  };
}
