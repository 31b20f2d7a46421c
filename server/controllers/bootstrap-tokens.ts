// kube-controller-manager's two bootstrap-token controllers:
// - the token cleaner deletes a bootstrap token Secret (type bootstrap.kubernetes.io/token
//   in kube-system) once its `expiration` has passed, and comes back at that moment for
//   one that has not expired yet;
// - the bootstrap signer keeps the `cluster-info` ConfigMap of kube-public signed: one
//   `jws-kubeconfig-<token id>` entry per token marked `usage-bootstrap-signing`, a detached
//   HS256 JWS of the `kubeconfig` entry keyed by the token's secret, so that a node holding a
//   token can trust the CA it reads there (kubeadm join's discovery). Entries of tokens that
//   are gone or expired go.
// Both are leader-elected and write conditionally (UID or resourceVersion preconditions).

import { createHmac } from 'node:crypto';
import type { KubeObject } from '../../storage/interface.js';
import { BOOTSTRAP_SECRET_PREFIX, BOOTSTRAP_SECRET_TYPE, bootstrapSecretExpired, bootstrapSecretValue } from '../authn/bootstrap-token.js';
import { startInformer } from '../authz/informer.js';
import { runLeaderElected } from './leader.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from './types.js';
import { errorMessage, internalContext, isConflict, isNotFound } from './util.js';
import { WorkQueue } from './workqueue.js';

const SYSTEM_NAMESPACE = 'kube-system';
const PUBLIC_NAMESPACE = 'kube-public';
const CLUSTER_INFO = 'cluster-info';
const KUBECONFIG_KEY = 'kubeconfig';
const SIGNATURE_PREFIX = 'jws-kubeconfig-';
const TOKEN_ID_RE = /^[a-z0-9]{6}$/;
const TOKEN_SECRET_RE = /^[a-z0-9]{16}$/;
const fieldManager = 'kube-controller-manager';

/** when a bootstrap token Secret expires (ms since epoch), undefined when it does not or the
 *  time does not parse (the cleaner then leaves it alone) */
export function bootstrapTokenExpiry(secret: KubeObject): number | undefined {
  const text = bootstrapSecretValue(secret, 'expiration');
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text)) return undefined;
  const t = Date.parse(text);
  return Number.isNaN(t) ? undefined : t;
}

/** go-jose's compact HS256 serialization with the payload left out ("<header>..<signature>") */
export function detachedSignature(content: string, tokenId: string, tokenSecret: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenId })).toString('base64url');
  const payload = Buffer.from(content).toString('base64url');
  const signature = createHmac('sha256', tokenSecret).update(`${header}.${payload}`).digest('base64url');
  return `${header}..${signature}`;
}

/** the id and secret of a token that may sign cluster-info now */
function signingToken(secret: KubeObject, now: Date): { id: string; secret: string } | undefined {
  if (secret.type !== BOOTSTRAP_SECRET_TYPE || secret.metadata.deletionTimestamp) return undefined;
  const id = bootstrapSecretValue(secret, 'token-id');
  const tokenSecret = bootstrapSecretValue(secret, 'token-secret');
  if (!TOKEN_ID_RE.test(id) || !TOKEN_SECRET_RE.test(tokenSecret)) return undefined;
  if (secret.metadata.name !== BOOTSTRAP_SECRET_PREFIX + id) return undefined;
  if (bootstrapSecretValue(secret, 'usage-bootstrap-signing') !== 'true') return undefined;
  if (bootstrapSecretExpired(secret, now)) return undefined;
  return { id, secret: tokenSecret };
}

/** cluster-info's data with exactly the valid tokens' signatures, or undefined when unchanged */
export function signedClusterInfo(
  data: Record<string, string>,
  secrets: readonly KubeObject[],
  now: Date,
): Record<string, string> | undefined {
  const content = data[KUBECONFIG_KEY];
  if (content === undefined) return undefined;
  const want = new Map<string, string>();
  for (const s of secrets) {
    const token = signingToken(s, now);
    if (token) want.set(SIGNATURE_PREFIX + token.id, detachedSignature(content, token.id, token.secret));
  }
  const next: Record<string, string> = {};
  let changed = false;
  for (const [k, v] of Object.entries(data)) {
    if (!k.startsWith(SIGNATURE_PREFIX)) next[k] = v;
    else if (want.has(k)) next[k] = want.get(k)!;
    if (k.startsWith(SIGNATURE_PREFIX) && want.get(k) !== v) changed = true;
  }
  for (const [k, v] of want) {
    if (!(k in data)) changed = true;
    next[k] = v;
  }
  return changed ? next : undefined;
}

async function runTokenCleaner(deps: ControllerDeps, signal: AbortSignal, log: Logger): Promise<void> {
  const secrets = deps.resolver.lookup('', 'v1', 'secrets');
  if (!secrets) throw new Error('the registry serves no secrets');
  const informer = startInformer(secrets, log, signal, {
    fieldSelector: `metadata.namespace=${SYSTEM_NAMESPACE},type=${BOOTSTRAP_SECRET_TYPE}`,
  });
  const queue = new WorkQueue();
  informer.onChange((type, s) => {
    if (type !== 'DELETED') queue.add(s.metadata.name ?? '');
  });
  await informer.synced;
  for (const s of informer.list(SYSTEM_NAMESPACE)) queue.add(s.metadata.name ?? '');
  await queue.run(signal, 1, async (name) => {
    const secret = informer.get(SYSTEM_NAMESPACE, name);
    if (!secret || secret.metadata.deletionTimestamp) return;
    const expiry = bootstrapTokenExpiry(secret);
    if (expiry === undefined) return;
    const left = expiry - Date.now();
    if (left > 0) {
      queue.addAfter(name, left);
      return;
    }
    try {
      await secrets.delete(internalContext(fieldManager, SYSTEM_NAMESPACE, signal), name, { preconditions: { uid: secret.metadata.uid } });
      log.v(2).info('deleted an expired bootstrap token', { secret: name });
    } catch (err) {
      if (signal.aborted || isNotFound(err) || isConflict(err)) return;
      log.v(1).info('deleting an expired bootstrap token failed, retrying', { secret: name, err: errorMessage(err) });
      queue.addRateLimited(name);
    }
  });
  informer.stop();
}

async function runBootstrapSigner(deps: ControllerDeps, signal: AbortSignal, log: Logger): Promise<void> {
  const secretsRes = deps.resolver.lookup('', 'v1', 'secrets');
  const configMapsRes = deps.resolver.lookup('', 'v1', 'configmaps');
  if (!secretsRes || !configMapsRes) throw new Error('the registry serves no secrets or configmaps');
  const secrets = startInformer(secretsRes, log, signal, {
    fieldSelector: `metadata.namespace=${SYSTEM_NAMESPACE},type=${BOOTSTRAP_SECRET_TYPE}`,
  });
  const configMaps = startInformer(configMapsRes, log, signal, {
    fieldSelector: `metadata.namespace=${PUBLIC_NAMESPACE},metadata.name=${CLUSTER_INFO}`,
  });
  const queue = new WorkQueue();
  const resign = () => queue.add(CLUSTER_INFO);
  secrets.onChange(resign);
  configMaps.onChange((type) => {
    if (type !== 'DELETED') resign();
  });
  await Promise.all([secrets.synced, configMaps.synced]);
  resign();
  await queue.run(signal, 1, async () => {
    const cm = configMaps.get(PUBLIC_NAMESPACE, CLUSTER_INFO);
    if (!cm) return;
    const all = secrets.list(SYSTEM_NAMESPACE);
    const data = signedClusterInfo((cm.data ?? {}) as Record<string, string>, all, new Date());
    // an expiring token's signature goes when it expires
    const expiries = all.map(bootstrapTokenExpiry).filter((t): t is number => t !== undefined && t > Date.now());
    if (expiries.length > 0) queue.addAfter(CLUSTER_INFO, Math.min(...expiries) - Date.now() + 1000);
    if (!data) return;
    const rv = cm.metadata.resourceVersion;
    try {
      await configMapsRes.update(
        internalContext(fieldManager, PUBLIC_NAMESPACE, signal),
        CLUSTER_INFO,
        (current) => {
          if (!current) throw Object.assign(new Error('gone'), { code: 404 });
          return { ...current, metadata: { ...current.metadata, resourceVersion: rv }, data };
        },
        { allowCreate: false },
      );
    } catch (err) {
      if (signal.aborted || isNotFound(err)) return;
      if (!isConflict(err)) log.v(1).info('signing cluster-info failed, retrying', { err: errorMessage(err) });
      queue.addRateLimited(CLUSTER_INFO);
    }
  });
  secrets.stop();
  configMaps.stop();
}

function leaderElected(
  deps: ControllerDeps,
  name: string,
  run: (deps: ControllerDeps, signal: AbortSignal, log: Logger) => Promise<void>,
): Controller {
  const log = deps.log ?? defaultLogger;
  return {
    name,
    start(signal) {
      return runLeaderElected(name, { resolver: deps.resolver, identity: deps.identity, signal, log }, (leading) =>
        run(deps, leading, log),
      );
    },
  };
}

export function tokenCleanerController(deps: ControllerDeps): Controller {
  return leaderElected(deps, 'token-cleaner', runTokenCleaner);
}

export function bootstrapSignerController(deps: ControllerDeps): Controller {
  return leaderElected(deps, 'bootstrap-signer', runBootstrapSigner);
}
