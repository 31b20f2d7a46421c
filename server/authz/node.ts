// The Node authorizer: a kubelet (user system:node:<name> in group system:nodes) may read the
// Secrets, ConfigMaps, PersistentVolumeClaims and PersistentVolumes that pods bound to its
// node use, request tokens for those pods' service accounts, and write its own Lease and
// CSINode; beyond that it gets what the system:node rules give. Anyone else: no opinion.
// The relationships come from watch-fed copies of Pods and PersistentVolumeClaims.

import type { KubeObject } from '../../storage/interface.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from './authorizer.js';
import type { ResourceResolver } from '../registry/rest.js';
import type { Logger } from '../log.js';
import { slimObject, startInformer, type Informer } from './informer.js';
import { nodeRules } from './bootstrap-policy.js';
import { rulesAllow } from './rbac/rules.js';
import { NODE_USER_PREFIX, NODES_GROUP } from './rbac/subjects.js';
import type { UserInfo } from '../machinery/user.js';

export function nodeNameOf(user: UserInfo): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.username.startsWith(NODE_USER_PREFIX)) return undefined;
  const name = user.username.slice(NODE_USER_PREFIX.length);
  return name || undefined;
}

type Ref = { kind: 'secret' | 'configmap' | 'pvc' | 'serviceaccount'; namespace: string; name: string };

/** what a pod refers to: volumes, env, envFrom, image pull secrets, its service account */
export function podReferences(pod: KubeObject): Ref[] {
  const ns = pod.metadata.namespace ?? '';
  const spec = (pod.spec ?? {}) as Record<string, unknown>;
  const out: Ref[] = [];
  const add = (kind: Ref['kind'], name: unknown) => {
    if (typeof name === 'string' && name) out.push({ kind, namespace: ns, name });
  };
  add('serviceaccount', spec.serviceAccountName || 'default');
  for (const s of (spec.imagePullSecrets as { name?: string }[] | undefined) ?? []) add('secret', s?.name);
  for (const v of (spec.volumes as Record<string, Record<string, unknown>>[] | undefined) ?? []) {
    add('secret', v.secret?.secretName);
    add('configmap', v.configMap?.name);
    add('pvc', v.persistentVolumeClaim?.claimName);
    if (v.ephemeral) add('pvc', `${pod.metadata.name}-${String((v as { name?: string }).name ?? '')}`);
    for (const src of (v.projected?.sources as Record<string, Record<string, unknown>>[] | undefined) ?? []) {
      add('secret', src.secret?.name);
      add('configmap', src.configMap?.name);
    }
    for (const key of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos', 'csi']) {
      const vol = v[key] as Record<string, unknown> | undefined;
      const ref = (vol?.secretRef ?? vol?.nodePublishSecretRef) as { name?: string } | undefined;
      add('secret', ref?.name ?? (key === 'azureFile' ? vol?.secretName : undefined));
    }
  }
  const containers = [
    ...((spec.initContainers as Record<string, unknown>[] | undefined) ?? []),
    ...((spec.containers as Record<string, unknown>[] | undefined) ?? []),
    ...((spec.ephemeralContainers as Record<string, unknown>[] | undefined) ?? []),
  ];
  for (const c of containers) {
    for (const e of (c.env as Record<string, Record<string, Record<string, unknown>>>[] | undefined) ?? []) {
      add('secret', e.valueFrom?.secretKeyRef?.name);
      add('configmap', e.valueFrom?.configMapKeyRef?.name);
    }
    for (const e of (c.envFrom as Record<string, Record<string, unknown>>[] | undefined) ?? []) {
      add('secret', e.secretRef?.name);
      add('configmap', e.configMapRef?.name);
    }
  }
  return out;
}

/** what the graph keeps of a pod: its node and what it refers to, found once per version
 *  (not the whole pod, for every pod of the cluster) */
export function podForGraph(pod: KubeObject): KubeObject {
  const nodeName = (pod.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return slimObject(pod, { spec: nodeName === undefined ? {} : { nodeName }, references: podReferences(pod) });
}

/** a pod's references: those podForGraph found, or found now in a whole pod */
function referencesOf(pod: KubeObject): Ref[] {
  return Array.isArray(pod.references) ? (pod.references as Ref[]) : podReferences(pod);
}

export interface NodeGraph {
  podsOn(node: string): KubeObject[];
  pvc(namespace: string, name: string): KubeObject | undefined;
}

export function informerNodeGraph(
  resolver: ResourceResolver,
  log: Logger,
  signal?: AbortSignal,
): NodeGraph & { synced: Promise<void>; stop(): void } {
  const pods = resolver.lookup('', 'v1', 'pods');
  const pvcs = resolver.lookup('', 'v1', 'persistentvolumeclaims');
  if (!pods || !pvcs) throw new Error('the registry serves no pods or persistentvolumeclaims');
  const podInformer: Informer = startInformer(pods, log, signal, { keep: podForGraph });
  const pvcInformer: Informer = startInformer(pvcs, log, signal);
  return {
    podsOn: (node) => podInformer.list().filter((p) => (p.spec as { nodeName?: string } | undefined)?.nodeName === node),
    pvc: (ns, name) => pvcInformer.get(ns, name),
    synced: Promise.all([podInformer.synced, pvcInformer.synced]).then(() => undefined),
    stop() {
      podInformer.stop();
      pvcInformer.stop();
    },
  };
}

const noRelationship = (node: string) => `no relationship found between node '${node}' and this object`;

export function createNodeAuthorizer(graph: () => NodeGraph | undefined, ready?: () => Promise<void>): Authorizer {
  const rules = nodeRules();
  const related = (node: string, want: Ref): boolean => {
    const g = graph();
    if (!g) return false;
    for (const pod of g.podsOn(node)) {
      for (const ref of referencesOf(pod)) {
        if (ref.kind === want.kind && ref.namespace === want.namespace && ref.name === want.name) return true;
      }
    }
    return false;
  };
  const relatedPV = (node: string, pvName: string): boolean => {
    const g = graph();
    if (!g) return false;
    for (const pod of g.podsOn(node)) {
      for (const ref of referencesOf(pod)) {
        if (ref.kind !== 'pvc') continue;
        const claim = g.pvc(ref.namespace, ref.name);
        if ((claim?.spec as { volumeName?: string } | undefined)?.volumeName === pvName) return true;
      }
    }
    return false;
  };
  const readOnly = (attrs: AuthorizationAttributes, node: string, kind: Ref['kind']): AuthorizationResult => {
    if (attrs.verb !== 'get' && attrs.verb !== 'list' && attrs.verb !== 'watch')
      return { decision: 'noOpinion', reason: `can only read resources of this type` };
    if (attrs.subresource) return { decision: 'noOpinion', reason: `cannot read subresource` };
    if (!attrs.name) return { decision: 'noOpinion', reason: 'can only read namespaced object of this type' };
    return related(node, { kind, namespace: attrs.namespace, name: attrs.name })
      ? { decision: 'allow' }
      : { decision: 'noOpinion', reason: noRelationship(node) };
  };
  return {
    async authorize(attrs) {
      const node = nodeNameOf(attrs.user);
      if (!node) return { decision: 'noOpinion' };
      await ready?.();
      if (attrs.isResourceRequest) {
        const gr = `${attrs.apiGroup}/${attrs.resource}`;
        switch (gr) {
          case '/secrets':
            return readOnly(attrs, node, 'secret');
          case '/configmaps':
            return readOnly(attrs, node, 'configmap');
          case '/persistentvolumeclaims':
            if (attrs.subresource === 'status' && ['get', 'update', 'patch'].includes(attrs.verb)) {
              return related(node, { kind: 'pvc', namespace: attrs.namespace, name: attrs.name })
                ? { decision: 'allow' }
                : { decision: 'noOpinion', reason: noRelationship(node) };
            }
            if (attrs.verb !== 'get' || attrs.subresource)
              return { decision: 'noOpinion', reason: 'can only get individual resources of this type' };
            return related(node, { kind: 'pvc', namespace: attrs.namespace, name: attrs.name })
              ? { decision: 'allow' }
              : { decision: 'noOpinion', reason: noRelationship(node) };
          case '/persistentvolumes':
            if (attrs.verb !== 'get' || attrs.subresource)
              return { decision: 'noOpinion', reason: 'can only get individual resources of this type' };
            return relatedPV(node, attrs.name) ? { decision: 'allow' } : { decision: 'noOpinion', reason: noRelationship(node) };
          case '/serviceaccounts':
            if (attrs.subresource !== 'token') break;
            if (attrs.verb !== 'create') return { decision: 'noOpinion', reason: 'can only create tokens for individual service accounts' };
            return related(node, { kind: 'serviceaccount', namespace: attrs.namespace, name: attrs.name })
              ? { decision: 'allow' }
              : { decision: 'noOpinion', reason: noRelationship(node) };
          case 'coordination.k8s.io/leases':
            if (attrs.namespace !== 'kube-node-lease' || (attrs.name !== node && attrs.verb !== 'create'))
              return { decision: 'noOpinion', reason: 'can only access node lease with the same name as the requesting node' };
            return ['get', 'create', 'update', 'patch', 'delete'].includes(attrs.verb)
              ? { decision: 'allow' }
              : { decision: 'noOpinion', reason: `can only get, create, update, patch, or delete a node lease` };
          case 'storage.k8s.io/csinodes':
            if (attrs.name !== node && attrs.verb !== 'create')
              return { decision: 'noOpinion', reason: 'can only access CSINode with the same name as the requesting node' };
            return ['get', 'create', 'update', 'patch', 'delete'].includes(attrs.verb)
              ? { decision: 'allow' }
              : { decision: 'noOpinion', reason: `can only get, create, update, patch, or delete a CSINode` };
        }
      }
      return rulesAllow(attrs, rules) ? { decision: 'allow' } : { decision: 'noOpinion' };
    },
  };
}
