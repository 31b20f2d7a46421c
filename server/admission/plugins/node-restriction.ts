// NodeRestriction (kube-apiserver 1.33's plugin/pkg/admission/noderestriction; off unless
// enabled): what a kubelet (user `system:node:<name>` in group `system:nodes`) may write.
// - pods: create only mirror pods bound to itself, owned by its own Node (controller, no
//   blockOwnerDeletion, matching UID) and naming no service account, secret, configmap, claim or
//   cluster trust bundle; delete, evict and update the status of only its own pods (no label
//   changes through status); no other subresource;
// - its own Node only: no configSource, no node-restriction.kubernetes.io/ labels nor unknown
//   kubernetes.io / k8s.io labels, no taint changes on update;
// - PVCs: only status, and only capacity/conditions/allocated resources of it;
// - service account tokens only bound to a pod of its own; its own Lease in kube-node-lease,
//   its own CSINode, ResourceSlices of its own.
// kapi runs the checks in the validating phase, on the final object (and on the stored one for
// deletes), where kube's mutating pass sees the same fields.

import type { KubeObject } from '../../../storage/interface.js';
import { errors } from '../../machinery/status.js';
import { asArray, asObject, isObject, semanticEqual, type JsonObject } from '../../registry/object.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { UserInfo } from '../../machinery/user.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { forbidden, getObject, referencesSecrets } from './pod-plugins-common.js';

const nodeUserPrefix = 'system:node:';
const nodesGroup = 'system:nodes';
const mirrorPodAnnotation = 'kubernetes.io/config.mirror';
const nodeLeaseNamespace = 'kube-node-lease';

/** the node a user is, or undefined when the user is not a node (kube's default node identifier) */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.username.startsWith(nodeUserPrefix) || !user.groups.includes(nodesGroup)) return undefined;
  return user.username.slice(nodeUserPrefix.length);
}

// ---- what a pod references ----

function containersOf(spec: JsonObject): JsonObject[] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) => asArray(spec[k]).filter(isObject));
}

function referencesConfigMaps(spec: JsonObject): boolean {
  for (const v of asArray(spec.volumes).map(asObject)) {
    if (isObject(v.configMap)) return true;
    for (const src of asArray(asObject(v.projected).sources)) if (isObject(asObject(src).configMap)) return true;
  }
  return containersOf(spec).some(
    (c) =>
      asArray(c.envFrom).some((e) => isObject(asObject(e).configMapRef)) ||
      asArray(c.env).some((e) => isObject(asObject(asObject(e).valueFrom).configMapKeyRef)),
  );
}

// ---- node labels ----

function labelNamespace(key: string): string {
  const i = key.indexOf('/');
  return i < 0 ? '' : key.slice(0, i);
}

const kubeletLabels = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const kubeletLabelNamespaces = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** kubelet's own labels: the well-known ones and anything under its two namespaces */
function isKubeletLabel(key: string): boolean {
  if (kubeletLabels.has(key)) return true;
  const ns = labelNamespace(key);
  return kubeletLabelNamespaces.some((allowed) => ns === allowed || ns.endsWith('.' + allowed));
}

function isKubernetesLabel(key: string): boolean {
  const ns = labelNamespace(key);
  return ns === 'kubernetes.io' || ns.endsWith('.kubernetes.io') || ns === 'k8s.io' || ns.endsWith('.k8s.io');
}

function forbiddenLabels(now: Record<string, string> | undefined, before: Record<string, string> | undefined): string[] {
  const a = now ?? {};
  const b = before ?? {};
  const modified = new Set<string>();
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) modified.add(k);
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) modified.add(k);
  const out = new Set<string>();
  for (const key of modified) {
    const ns = labelNamespace(key);
    if (ns === 'node-restriction.kubernetes.io' || ns.endsWith('.node-restriction.kubernetes.io')) out.add(key);
    if (isKubernetesLabel(key) && !isKubeletLabel(key)) out.add(key);
  }
  return [...out].sort();
}

// ---- the plugin ----

export function nodeRestrictionPlugin(deps: Pick<AdmissionDeps, 'resolver'>): AdmissionPlugin {
  const get = (resource: string, namespace: string, name: string, group = '') =>
    getObject(deps.resolver, { group, version: 'v1', resource }, namespace, name);

  async function existingPod(attrs: AdmissionAttributes, name: string): Promise<KubeObject> {
    const pod = await get('pods', attrs.namespace, name);
    if (!pod) throw errors.notFound({ group: '', resource: 'pods', name });
    return pod;
  }

  async function podCreate(node: string, attrs: AdmissionAttributes): Promise<void> {
    const pod = attrs.object as KubeObject;
    const spec = asObject(pod.spec);
    if (pod.metadata.annotations?.[mirrorPodAnnotation] === undefined) {
      throw forbidden(attrs, `pod does not have "${mirrorPodAnnotation}" annotation, node "${node}" can only create mirror pods`);
    }
    if (spec.nodeName !== node) throw forbidden(attrs, `node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = asArray(pod.metadata.ownerReferences).map(asObject);
    if (owners.length > 1) throw forbidden(attrs, `node "${node}" can only create pods with a single owner reference set to itself`);
    const owner = owners[0];
    if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) {
      throw forbidden(attrs, `node "${node}" can only create pods with an owner reference set to itself`);
    }
    if (owner.controller !== true)
      throw forbidden(attrs, `node "${node}" can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true) throw forbidden(attrs, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
    const nodeObj = await get('nodes', '', node);
    if (!nodeObj) throw errors.notFound({ group: '', resource: 'nodes', name: node });
    if (owner.uid !== nodeObj.metadata.uid)
      throw forbidden(attrs, `node ${node} UID mismatch: expected ${String(owner.uid ?? '')} got ${nodeObj.metadata.uid ?? ''}`);
    if (spec.serviceAccountName) throw forbidden(attrs, `node "${node}" can not create pods that reference a service account`);
    if (referencesSecrets(spec)) throw forbidden(attrs, `node "${node}" can not create pods that reference secrets`);
    if (referencesConfigMaps(spec)) throw forbidden(attrs, `node "${node}" can not create pods that reference configmaps`);
    const volumes = asArray(spec.volumes).map(asObject);
    if (volumes.some((v) => asArray(asObject(v.projected).sources).some((s) => isObject(asObject(s).clusterTrustBundle)))) {
      throw forbidden(attrs, `node "${node}" can not create pods that reference clustertrustbundles`);
    }
    if (volumes.some((v) => isObject(v.persistentVolumeClaim)))
      throw forbidden(attrs, `node "${node}" can not create pods that reference persistentvolumeclaims`);
  }

  async function pods(node: string, attrs: AdmissionAttributes): Promise<void> {
    switch (attrs.subresource ?? '') {
      case '':
        if (attrs.operation === 'CREATE') return podCreate(node, attrs);
        if (attrs.operation === 'DELETE') {
          const pod = attrs.oldObject ?? (await existingPod(attrs, attrs.name));
          if (asObject(pod.spec).nodeName !== node)
            throw forbidden(attrs, `node "${node}" can only delete pods with spec.nodeName set to itself`);
          return;
        }
        throw forbidden(attrs, `unexpected operation "${attrs.operation}", node "${node}" can only create and delete mirror pods`);
      case 'status': {
        if (attrs.operation !== 'UPDATE' || !attrs.oldObject || !attrs.object)
          throw forbidden(attrs, `unexpected operation "${attrs.operation}"`);
        if (asObject(attrs.oldObject.spec).nodeName !== node)
          throw forbidden(attrs, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
        if (!semanticEqual(attrs.oldObject.metadata.labels ?? {}, attrs.object.metadata.labels ?? {}))
          throw forbidden(attrs, `node "${node}" cannot update labels through pod status`);
        const claims = (o: KubeObject) =>
          asArray(asObject(o.status).resourceClaimStatuses).map((c) => [asObject(c).name, asObject(c).resourceClaimName ?? null]);
        if (!semanticEqual(claims(attrs.oldObject), claims(attrs.object)))
          throw forbidden(attrs, `node "${node}" cannot update resource claim statues`);
        return;
      }
      case 'eviction': {
        if (attrs.operation !== 'CREATE') throw forbidden(attrs, `unexpected operation ${attrs.operation}`);
        const podName = attrs.name || attrs.object?.metadata.name || '';
        if (!podName) throw forbidden(attrs, 'could not determine pod from request data');
        const pod = await existingPod(attrs, podName);
        if (asObject(pod.spec).nodeName !== node)
          throw forbidden(attrs, `node ${node} can only evict pods with spec.nodeName set to itself`);
        return;
      }
      default:
        throw forbidden(attrs, `unexpected pod subresource "${attrs.subresource ?? ''}", only 'status' and 'eviction' are allowed`);
    }
  }

  function nodes(node: string, attrs: AdmissionAttributes): void {
    const requested = attrs.name || attrs.object?.metadata.name || '';
    if (requested !== node) throw forbidden(attrs, `node "${node}" is not allowed to modify node "${requested}"`);
    const obj = attrs.object;
    if (attrs.operation === 'CREATE' && obj) {
      if (isObject(asObject(obj.spec).configSource))
        throw forbidden(attrs, `node "${node}" is not allowed to create pods with a non-nil configSource`);
      const bad = forbiddenLabels(obj.metadata.labels, undefined);
      if (bad.length) throw forbidden(attrs, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
    }
    if (attrs.operation === 'UPDATE' && obj && attrs.oldObject) {
      const spec = asObject(obj.spec);
      const oldSpec = asObject(attrs.oldObject.spec);
      if (isObject(spec.configSource) && !semanticEqual(spec.configSource, oldSpec.configSource)) {
        throw forbidden(attrs, `node "${node}" is not allowed to update configSource to a new non-nil configSource`);
      }
      if (!semanticEqual(spec.taints, oldSpec.taints)) throw forbidden(attrs, `node "${node}" is not allowed to modify taints`);
      const bad = forbiddenLabels(obj.metadata.labels, attrs.oldObject.metadata.labels);
      if (bad.length) throw forbidden(attrs, `is not allowed to modify labels: ${bad.join(', ')}`);
    }
  }

  function claimStatus(node: string, attrs: AdmissionAttributes): void {
    if (attrs.subresource !== 'status') throw forbidden(attrs, 'may only update PVC status');
    if (attrs.operation !== 'UPDATE' || !attrs.object || !attrs.oldObject)
      throw forbidden(attrs, `unexpected operation "${attrs.operation}"`);
    const strip = (o: KubeObject): JsonObject => {
      const c = structuredClone(o) as JsonObject & KubeObject;
      delete c.metadata.resourceVersion;
      delete c.metadata.managedFields;
      const status = asObject(c.status);
      for (const k of ['capacity', 'conditions', 'allocatedResourceStatuses', 'allocatedResources']) delete status[k];
      return c;
    };
    if (!semanticEqual(strip(attrs.oldObject), strip(attrs.object))) {
      throw forbidden(attrs, `node "${node}" is not allowed to update fields other than status.quantity and status.conditions`);
    }
  }

  async function tokenRequest(node: string, attrs: AdmissionAttributes): Promise<void> {
    if (attrs.operation !== 'CREATE' || attrs.subresource !== 'token') return;
    const ref = asObject(asObject(attrs.object?.spec).boundObjectRef);
    if (ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) throw forbidden(attrs, 'node requested token not bound to a pod');
    if (!ref.uid) throw forbidden(attrs, 'node requested token with a pod binding without a uid');
    const pod = await existingPod(attrs, String(ref.name));
    if (ref.uid !== pod.metadata.uid) {
      throw forbidden(
        attrs,
        `the UID in the bound object reference (${String(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    if (asObject(pod.spec).nodeName !== node) throw forbidden(attrs, 'node requested token bound to a pod scheduled on a different node');
  }

  function ownName(attrs: AdmissionAttributes): string {
    return attrs.operation === 'CREATE' ? (attrs.object?.metadata.name ?? '') : attrs.name;
  }

  return {
    name: 'NodeRestriction',
    handles: (attrs) => nodeIdentity(attrs.user) !== undefined,
    async validate(attrs) {
      const node = nodeIdentity(attrs.user);
      if (node === undefined) return;
      if (!node) throw forbidden(attrs, `could not determine node from user "${attrs.user.username}"`);
      const { group, resource } = attrs.resource;
      if (group === '' && resource === 'pods') return pods(node, attrs);
      if (group === '' && resource === 'nodes') return nodes(node, attrs);
      if (group === '' && resource === 'persistentvolumeclaims') return claimStatus(node, attrs);
      if (group === '' && resource === 'serviceaccounts') return tokenRequest(node, attrs);
      if (group === 'coordination.k8s.io' && resource === 'leases') {
        if (attrs.namespace !== nodeLeaseNamespace)
          throw forbidden(attrs, `can only access leases in the "${nodeLeaseNamespace}" system namespace`);
        if (ownName(attrs) !== node) throw forbidden(attrs, 'can only access node lease with the same name as the requesting node');
        return;
      }
      if (group === 'storage.k8s.io' && resource === 'csinodes') {
        if (ownName(attrs) !== node) throw forbidden(attrs, 'can only access CSINode with the same name as the requesting node');
        return;
      }
      if (group === 'resource.k8s.io' && resource === 'resourceslices') {
        if (attrs.operation === 'CREATE' && asObject(attrs.object?.spec).nodeName !== node) {
          throw forbidden(attrs, 'can only create ResourceSlice with the same NodeName as the requesting node');
        }
        if (attrs.operation === 'DELETE' && asObject(attrs.oldObject?.spec).nodeName !== node) {
          throw forbidden(attrs, 'can only delete ResourceSlice with the same NodeName as the requesting node');
        }
      }
    },
  };
}

export const nodeRestrictionFactory: AdmissionPluginFactory = {
  name: 'NodeRestriction',
  create: (deps) => nodeRestrictionPlugin(deps),
};
