// The PVC and PV protection controllers (kube-controller-manager's pvc-protection and
// pv-protection): StorageObjectInUseProtection admission puts `kubernetes.io/pvc-protection`
// on every claim and `kubernetes.io/pv-protection` on every volume; these remove the
// finalizer from a claim being deleted once no running pod uses it (pods are read from etcd,
// not from a possibly stale cache, before it goes), and from a volume being deleted once it
// is not Bound. Leader-elected.

import { setMaxListeners } from 'node:events';
import type { KubeObject } from '../../storage/interface.js';
import { phaseOnly, slimObject, startInformer, type Informer, type InformerOptions } from '../authz/informer.js';
import { asArray, asObject, clone, isObject } from '../registry/object.js';
import type { ResourceResolver, RESTResource } from '../registry/rest.js';
import { runLeaderElected } from './leader.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from './types.js';
import { errorMessage, internalContext, isNotFound } from './util.js';
import { WorkQueue } from './workqueue.js';

const fieldManager = 'kube-controller-manager';
export const pvcProtectionFinalizer = 'kubernetes.io/pvc-protection';
export const pvProtectionFinalizer = 'kubernetes.io/pv-protection';

const hasFinalizer = (obj: KubeObject, f: string): boolean => asArray(obj.metadata.finalizers).includes(f);
const deleting = (obj: KubeObject): boolean => Boolean(obj.metadata.deletionTimestamp);

/** the claims a pod uses: its persistentVolumeClaim volumes and its generic ephemeral ones */
export function claimsOfPod(pod: KubeObject): string[] {
  const out: string[] = [];
  for (const v of asArray(asObject(pod.spec).volumes).filter(isObject)) {
    const claim = asObject(v.persistentVolumeClaim).claimName;
    if (typeof claim === 'string') out.push(claim);
    if (isObject(v.ephemeral)) out.push(`${pod.metadata.name ?? ''}-${String(v.name ?? '')}`);
  }
  return out;
}

/** what the controller reads of a pod: its claims and its phase (none of either in a pod
 *  watched as metadata alone) */
function podClaimsAndPhase(pod: KubeObject): KubeObject {
  const volumes = asArray(asObject(pod.spec).volumes).filter(
    (v) => isObject(v) && (isObject(v.persistentVolumeClaim) || isObject(v.ephemeral)),
  );
  // most pods use no claim: they keep no spec at all
  return slimObject(pod, { spec: volumes.length > 0 ? { volumes } : undefined, status: phaseOnly(pod.status) });
}

function podIsTerminal(pod: KubeObject): boolean {
  const phase = asObject(pod.status).phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** the namespaces holding a claim that is being deleted and keeps the pvc-protection
 *  finalizer, kept up to date from the claims informer's changes */
export class ClaimsBeingDeleted {
  private readonly byNamespace = new Map<string, Set<string>>();

  constructor(claims: Informer) {
    claims.onChange((type, c) => this.update(type === 'DELETED' ? undefined : c, c));
  }

  in(namespace: string): boolean {
    return this.byNamespace.has(namespace);
  }

  private update(current: KubeObject | undefined, c: KubeObject): void {
    const ns = c.metadata.namespace ?? '';
    const name = c.metadata.name ?? '';
    let names = this.byNamespace.get(ns);
    if (current && deleting(current) && hasFinalizer(current, pvcProtectionFinalizer)) {
      if (!names) this.byNamespace.set(ns, (names = new Set()));
      names.add(name);
    } else if (names?.delete(name) && names.size === 0) {
      this.byNamespace.delete(ns);
    }
  }
}

/**
 * How the pods informer watches: a pod's claims and phase matter only to claims being
 * deleted in its namespace, so elsewhere its changes are watched as metadata alone. A claim
 * that starts being deleted is queued by its own change, and that work lists the namespace's
 * pods afresh, so the pod changes before the informer saw the claim need nothing whole.
 */
export function podInformerOptions(beingDeleted: Pick<ClaimsBeingDeleted, 'in'>): InformerOptions {
  return { keep: podClaimsAndPhase, metadataOnly: (namespace) => !beingDeleted.in(namespace) };
}

async function removeFinalizer(rest: RESTResource, namespace: string, name: string, finalizer: string, signal: AbortSignal): Promise<void> {
  await rest.update(
    internalContext(fieldManager, namespace, signal),
    name,
    (current) => {
      if (!current) throw new Error('gone');
      const next = clone(current);
      next.metadata.finalizers = asArray(current.metadata.finalizers).filter((f) => f !== finalizer) as string[];
      return next;
    },
    { allowCreate: false },
  );
}

export async function runStorageProtectionController(resolver: ResourceResolver, signal: AbortSignal, log: Logger): Promise<void> {
  const pvcRes = resolver.lookup('', 'v1', 'persistentvolumeclaims');
  const pvRes = resolver.lookup('', 'v1', 'persistentvolumes');
  const podRes = resolver.lookup('', 'v1', 'pods');
  if (!pvcRes || !pvRes || !podRes) throw new Error('the registry serves no claims, volumes or pods');
  setMaxListeners(50, signal);
  const claims = startInformer(pvcRes, log, signal);
  const beingDeleted = new ClaimsBeingDeleted(claims);
  const volumes = startInformer(pvRes, log, signal);
  const pods = startInformer(podRes, log, signal, podInformerOptions(beingDeleted));
  const queue = new WorkQueue();
  claims.onChange((type, c) => {
    if (type !== 'DELETED' && deleting(c) && hasFinalizer(c, pvcProtectionFinalizer))
      queue.add(`pvc:${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`);
  });
  volumes.onChange((type, v) => {
    if (type !== 'DELETED' && deleting(v) && hasFinalizer(v, pvProtectionFinalizer)) queue.add(`pv:${v.metadata.name ?? ''}`);
  });
  // a pod that goes away or ends may free the claims it used
  pods.onChange((type, p) => {
    if (type !== 'DELETED' && !podIsTerminal(p)) return;
    for (const name of claimsOfPod(p)) {
      const c = claims.get(p.metadata.namespace ?? '', name);
      if (c && deleting(c)) queue.add(`pvc:${c.metadata.namespace ?? ''}/${name}`);
    }
  });
  await Promise.all([claims.synced, volumes.synced, pods.synced]);
  for (const c of claims.list())
    if (deleting(c) && hasFinalizer(c, pvcProtectionFinalizer)) queue.add(`pvc:${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`);
  for (const v of volumes.list()) if (deleting(v) && hasFinalizer(v, pvProtectionFinalizer)) queue.add(`pv:${v.metadata.name ?? ''}`);

  await queue.run(signal, 2, async (key) => {
    try {
      if (key.startsWith('pvc:')) {
        const [ns, name] = key.slice(4).split('/') as [string, string];
        const claim = claims.get(ns, name);
        if (!claim || !deleting(claim) || !hasFinalizer(claim, pvcProtectionFinalizer)) return;
        const live = await podRes.list(internalContext(fieldManager, ns, signal), {});
        if (live.items.some((p) => !podIsTerminal(p) && claimsOfPod(p).includes(name))) return;
        await removeFinalizer(pvcRes, ns, name, pvcProtectionFinalizer, signal);
      } else {
        const name = key.slice(3);
        const volume = volumes.get('', name);
        if (!volume || !deleting(volume) || !hasFinalizer(volume, pvProtectionFinalizer)) return;
        if (asObject(volume.status).phase === 'Bound') return;
        await removeFinalizer(pvRes, '', name, pvProtectionFinalizer, signal);
      }
      queue.forget(key);
    } catch (err) {
      if (signal.aborted || isNotFound(err)) return;
      log.v(1).info('removing a protection finalizer failed, retrying', { key, err: errorMessage(err) });
      queue.addRateLimited(key);
    }
  });
  claims.stop();
  volumes.stop();
  pods.stop();
}

export function storageProtectionController(deps: ControllerDeps): Controller {
  const log = deps.log ?? defaultLogger;
  return {
    name: 'storage-protection',
    start(signal) {
      // shared by every controller started together: one more listener per controller
      setMaxListeners(100, signal);
      return runLeaderElected(
        'storage-protection-controller',
        { resolver: deps.resolver, identity: deps.identity, signal, log },
        (leading) => runStorageProtectionController(deps.resolver, leading, log),
      );
    },
  };
}
