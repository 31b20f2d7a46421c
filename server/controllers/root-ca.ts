// The root CA publisher (kube-controller-manager's root-ca-cert-publisher): every active
// namespace has the ConfigMap `kube-root-ca.crt` whose only data is `ca.crt`, the CA that
// verifies the API server, with kube's description annotation. Edits and deletions are put
// back. Leader-elected; every write is conditional, so a race with a user's edit retries.

import type { KubeObject } from '../../storage/interface.js';
import { startInformer } from '../authz/informer.js';
import type { ResourceResolver } from '../registry/rest.js';
import { runLeaderElected } from './leader.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from './types.js';
import { errorMessage, internalContext, isAlreadyExists, isConflict, isNotFound } from './util.js';
import { jsonEqual } from '../registry/object.js';
import { WorkQueue } from './workqueue.js';

const fieldManager = 'kube-controller-manager';
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';

function isCurrent(cm: KubeObject, caPem: string): boolean {
  return jsonEqual(cm.data, { 'ca.crt': caPem }) && cm.metadata.annotations?.[DESCRIPTION_ANNOTATION] === ROOT_CA_DESCRIPTION;
}

export async function runRootCAController(resolver: ResourceResolver, caPem: string, signal: AbortSignal, log: Logger): Promise<void> {
  const nsRes = resolver.lookup('', 'v1', 'namespaces');
  const cmRes = resolver.lookup('', 'v1', 'configmaps');
  if (!nsRes || !cmRes) throw new Error('the registry serves no namespaces or configmaps');
  const namespaces = startInformer(nsRes, log, signal);
  const configMaps = startInformer(cmRes, log, signal, { fieldSelector: `metadata.name=${ROOT_CA_CONFIGMAP}` });
  const queue = new WorkQueue();
  namespaces.onChange((type, ns) => {
    if (type !== 'DELETED') queue.add(ns.metadata.name ?? '');
  });
  configMaps.onChange((type, cm) => {
    if (type === 'DELETED' || !isCurrent(cm, caPem)) queue.add(cm.metadata.namespace ?? '');
  });
  await Promise.all([namespaces.synced, configMaps.synced]);
  for (const ns of namespaces.list('')) queue.add(ns.metadata.name ?? '');
  await queue.run(signal, 2, async (name) => {
    const ns = namespaces.get('', name);
    if (!ns || ns.metadata.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') return;
    const ctx = internalContext(fieldManager, name, signal);
    try {
      const cached = configMaps.get(name, ROOT_CA_CONFIGMAP);
      if (!cached) {
        try {
          await cmRes.create(ctx, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: ROOT_CA_CONFIGMAP, namespace: name, annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } },
            data: { 'ca.crt': caPem },
          });
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          queue.addAfter(name, 200);
        }
      } else if (!isCurrent(cached, caPem)) {
        const rv = cached.metadata.resourceVersion;
        await cmRes.update(
          ctx,
          ROOT_CA_CONFIGMAP,
          (current) => {
            if (!current) throw Object.assign(new Error('gone'), { code: 404 });
            return {
              ...current,
              metadata: {
                ...current.metadata,
                resourceVersion: rv,
                annotations: { ...(current.metadata.annotations ?? {}), [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION },
              },
              data: { 'ca.crt': caPem },
              binaryData: undefined,
            };
          },
          { allowCreate: false },
        );
      }
      queue.forget(name);
    } catch (err) {
      if (signal.aborted) return;
      if (!isConflict(err) && !isNotFound(err))
        log.v(1).info('publishing the root CA failed, retrying', { namespace: name, err: errorMessage(err) });
      queue.addRateLimited(name);
    }
  });
  namespaces.stop();
  configMaps.stop();
}

export function rootCAController(
  deps: ControllerDeps,
  caPem: string,
  opts: { leaseDurationSeconds?: number; retryPeriodMs?: number } = {},
): Controller {
  const log = deps.log ?? defaultLogger;
  return {
    name: 'root-ca-cert-publisher',
    start(signal) {
      return runLeaderElected(
        'root-ca-cert-publisher',
        { resolver: deps.resolver, identity: deps.identity, signal, log, ...opts },
        (leading) => runRootCAController(deps.resolver, caPem, leading, log),
      );
    },
  };
}
