// The service account controller (kube-controller-manager's serviceaccount-controller): every
// active namespace has a ServiceAccount named `default`; one that is deleted comes back.
// Leader-elected; creating an account that exists already counts as success.

import { startInformer } from '../authz/informer.js';
import type { ResourceResolver } from '../registry/rest.js';
import { runLeaderElected } from './leader.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from './types.js';
import { errorMessage, internalContext, isAlreadyExists, isNotFound } from './util.js';
import { WorkQueue } from './workqueue.js';

const fieldManager = 'kube-controller-manager';
export const DEFAULT_SERVICE_ACCOUNT = 'default';

export async function runServiceAccountsController(
  resolver: ResourceResolver,
  signal: AbortSignal,
  log: Logger,
  accounts: readonly string[] = [DEFAULT_SERVICE_ACCOUNT],
): Promise<void> {
  const nsRes = resolver.lookup('', 'v1', 'namespaces');
  const saRes = resolver.lookup('', 'v1', 'serviceaccounts');
  if (!nsRes || !saRes) throw new Error('the registry serves no namespaces or serviceaccounts');
  const namespaces = startInformer(nsRes, log, signal);
  const serviceAccounts = startInformer(saRes, log, signal);
  const queue = new WorkQueue();
  namespaces.onChange((type, ns) => {
    if (type !== 'DELETED') queue.add(ns.metadata.name ?? '');
  });
  serviceAccounts.onChange((type, sa) => {
    if (type === 'DELETED' && accounts.includes(sa.metadata.name ?? '')) queue.add(sa.metadata.namespace ?? '');
  });
  await Promise.all([namespaces.synced, serviceAccounts.synced]);
  for (const ns of namespaces.list('')) queue.add(ns.metadata.name ?? '');
  await queue.run(signal, 2, async (name) => {
    const ns = namespaces.get('', name);
    // a namespace being deleted gets nothing new (kube answers such creates with 403 anyway)
    if (!ns || ns.metadata.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') return;
    try {
      for (const account of accounts) {
        if (serviceAccounts.get(name, account)) continue;
        try {
          await saRes.create(internalContext(fieldManager, name, signal), {
            apiVersion: 'v1',
            kind: 'ServiceAccount',
            metadata: { name: account, namespace: name },
          });
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
      }
      queue.forget(name);
    } catch (err) {
      if (signal.aborted || isNotFound(err)) return;
      log.v(1).info('creating the default service account failed, retrying', { namespace: name, err: errorMessage(err) });
      queue.addRateLimited(name);
    }
  });
  namespaces.stop();
  serviceAccounts.stop();
}

export function serviceAccountsController(
  deps: ControllerDeps,
  opts: { leaseDurationSeconds?: number; retryPeriodMs?: number } = {},
): Controller {
  const log = deps.log ?? defaultLogger;
  return {
    name: 'serviceaccount',
    start(signal) {
      return runLeaderElected(
        'serviceaccount-controller',
        { resolver: deps.resolver, identity: deps.identity, signal, log, ...opts },
        (leading) => runServiceAccountsController(deps.resolver, leading, log),
      );
    },
  };
}
