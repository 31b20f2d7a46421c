// ServiceAccount (kube-apiserver 1.33's plugin/pkg/admission/serviceaccount), for pods:
// - on create, an empty spec.serviceAccountName becomes `default`, and the service account must
//   exist (denied otherwise);
// - unless the pod or else the service account turns automountServiceAccountToken off, every
//   init container and container gets a read-only mount of a projected `kube-api-access-xxxxx`
//   volume (bound token, kube-root-ca.crt, namespace) at the well-known path;
// - a pod without imagePullSecrets takes the service account's;
// - mirror pods (the kubelet's static pods) are left alone but may reference neither service
//   accounts nor secrets;
// - a service account annotated `kubernetes.io/enforce-mountable-secrets: "true"` limits the
//   secrets the pod may use to those it lists (also for ephemeral containers added later).

import type { KubeObject } from '../../../storage/interface.js';
import { generateName } from '../../registry/store.js';
import { asArray, asObject, isObject, type JsonObject } from '../../registry/object.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { forbidden, getObject, messageOf, referencesSecrets, reorderPodSpec } from './pod-plugins-common.js';

export const defaultServiceAccountName = 'default';
export const enforceMountableSecretsAnnotation = 'kubernetes.io/enforce-mountable-secrets';
export const tokenVolumePrefix = 'kube-api-access-';
export const tokenMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
const mirrorPodAnnotation = 'kubernetes.io/config.mirror';
/** the bound token's lifetime the kubelet asks for (kube's warn-only extended expiry) */
const tokenExpirationSeconds = 3607;
const defaultAccountAttempts = 10;
const serviceAccounts = { group: '', version: 'v1', resource: 'serviceaccounts' };

/** the projected volume source kube-apiserver mounts in pods */
export function tokenVolumeSource(): JsonObject {
  return {
    sources: [
      { serviceAccountToken: { expirationSeconds: tokenExpirationSeconds, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
    defaultMode: 420,
  };
}

function handles(attrs: AdmissionAttributes): boolean {
  if (attrs.resource.group !== '' || attrs.resource.resource !== 'pods') return false;
  if (attrs.subresource && attrs.subresource !== 'ephemeralcontainers') return false;
  return attrs.object !== null;
}

function isMirrorPod(pod: KubeObject): boolean {
  return pod.metadata.annotations?.[mirrorPodAnnotation] !== undefined;
}

function shouldAutomount(sa: KubeObject, spec: JsonObject): boolean {
  if (typeof spec.automountServiceAccountToken === 'boolean') return spec.automountServiceAccountToken;
  if (typeof sa.automountServiceAccountToken === 'boolean') return sa.automountServiceAccountToken;
  return true;
}

function enforcesMountableSecrets(sa: KubeObject): boolean {
  const v = sa.metadata.annotations?.[enforceMountableSecretsAnnotation];
  // Go's strconv.ParseBool
  return v !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);
}

function containersOf(spec: JsonObject, key: string): JsonObject[] {
  return asArray(spec[key]).filter(isObject);
}

function mountToken(spec: JsonObject): void {
  const volumes = asArray(spec.volumes).filter(isObject);
  const existing = volumes.find((v) => typeof v.name === 'string' && v.name.startsWith(tokenVolumePrefix));
  const volumeName = typeof existing?.name === 'string' ? existing.name : generateName(tokenVolumePrefix);
  let needsVolume = false;
  for (const key of ['initContainers', 'containers']) {
    for (const c of containersOf(spec, key)) {
      const mounts = asArray(c.volumeMounts);
      if (mounts.some((m) => asObject(m).mountPath === tokenMountPath)) continue;
      c.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: tokenMountPath }];
      needsVolume = true;
    }
  }
  if (!existing && needsVolume) spec.volumes = [...asArray(spec.volumes), { name: volumeName, projected: tokenVolumeSource() }];
}

function namesOf(list: unknown): Set<string> {
  return new Set(
    asArray(list)
      .map((r) => asObject(r).name)
      .filter((n): n is string => typeof n === 'string'),
  );
}

function secretRefsOfContainer(c: JsonObject, what: string, saName: string, mountable: Set<string>): string | undefined {
  for (const e of asArray(c.env)) {
    const ref = asObject(asObject(asObject(e).valueFrom).secretKeyRef);
    if (typeof ref.name === 'string' && !mountable.has(ref.name)) {
      return `${what} ${String(c.name)} with envVar ${String(asObject(e).name)} referencing secret.secretName="${ref.name}" is not allowed because service account ${saName} does not reference that secret`;
    }
  }
  for (const e of asArray(c.envFrom)) {
    const ref = asObject(asObject(e).secretRef);
    if (typeof ref.name === 'string' && !mountable.has(ref.name)) {
      return `${what} ${String(c.name)} with envFrom referencing secret.secretName="${ref.name}" is not allowed because service account ${saName} does not reference that secret`;
    }
  }
  return undefined;
}

/** the first secret reference the service account does not allow, as kube words it */
function disallowedSecretReference(sa: KubeObject, spec: JsonObject): string | undefined {
  const saName = sa.metadata.name ?? '';
  const mountable = namesOf(sa.secrets);
  for (const v of asArray(spec.volumes)) {
    const secret = asObject(asObject(v).secret);
    if (!isObject(asObject(v).secret)) continue;
    const name = typeof secret.secretName === 'string' ? secret.secretName : '';
    if (!mountable.has(name))
      return `volume with secret.secretName="${name}" is not allowed because service account ${saName} does not reference that secret`;
  }
  for (const c of containersOf(spec, 'initContainers')) {
    const why = secretRefsOfContainer(c, 'init container', saName, mountable);
    if (why) return why;
  }
  for (const c of containersOf(spec, 'containers')) {
    const why = secretRefsOfContainer(c, 'container', saName, mountable);
    if (why) return why;
  }
  const pullable = namesOf(sa.imagePullSecrets);
  const pulls = asArray(spec.imagePullSecrets);
  for (let i = 0; i < pulls.length; i++) {
    const name = asObject(pulls[i]).name;
    if (typeof name !== 'string' || !pullable.has(name)) {
      return `imagePullSecrets[${i}].name="${String(name ?? '')}" is not allowed because service account ${saName} does not reference that imagePullSecret`;
    }
  }
  return undefined;
}

export function serviceAccountPlugin(deps: Pick<AdmissionDeps, 'resolver'>): AdmissionPlugin {
  async function lookup(attrs: AdmissionAttributes, name: string): Promise<KubeObject> {
    let sa: KubeObject | null = null;
    // the `default` account is created by a controller right after its namespace: like kube,
    // look for it a few more times before giving up
    const attempts = name === defaultServiceAccountName ? defaultAccountAttempts : 1;
    const pauseMs = 100 + Math.floor(Math.random() * 100);
    for (let i = 0; i < attempts && !sa; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, pauseMs));
      try {
        sa = await getObject(deps.resolver, serviceAccounts, attrs.namespace, name);
      } catch (err) {
        throw forbidden(attrs, `error looking up service account ${attrs.namespace}/${name}: ${messageOf(err)}`);
      }
    }
    if (!sa) throw forbidden(attrs, `error looking up service account ${attrs.namespace}/${name}: serviceaccount "${name}" not found`);
    return sa;
  }

  async function validateMirrorPod(attrs: AdmissionAttributes, pod: KubeObject): Promise<void> {
    const spec = asObject(pod.spec);
    if (spec.serviceAccountName) throw forbidden(attrs, 'a mirror pod may not reference service accounts');
    if (referencesSecrets(spec)) throw forbidden(attrs, 'a mirror pod may not reference secrets');
    for (const v of asArray(spec.volumes)) {
      for (const src of asArray(asObject(asObject(v).projected).sources)) {
        if (isObject(asObject(src).serviceAccountToken))
          throw forbidden(attrs, 'a mirror pod may not use ServiceAccountToken volume projections');
      }
    }
  }

  async function validateEphemeralContainers(attrs: AdmissionAttributes, pod: KubeObject): Promise<void> {
    const spec = asObject(pod.spec);
    const saName = typeof spec.serviceAccountName === 'string' ? spec.serviceAccountName : '';
    if (!saName) throw forbidden(attrs, `no service account specified for pod ${attrs.namespace}/${pod.metadata.name ?? ''}`);
    const sa = await lookup(attrs, saName);
    if (!enforcesMountableSecrets(sa)) return;
    const mountable = namesOf(sa.secrets);
    for (const c of containersOf(spec, 'ephemeralContainers')) {
      const why = secretRefsOfContainer(c, 'ephemeral container', saName, mountable);
      if (why) throw forbidden(attrs, why);
    }
  }

  return {
    name: 'ServiceAccount',
    handles,
    async mutate(attrs) {
      const pod = attrs.object as KubeObject;
      if (attrs.operation !== 'CREATE' || attrs.subresource) return pod;
      if (isMirrorPod(pod)) return pod;
      const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
      // v1's deprecated spec.serviceAccount stands in for an empty serviceAccountName, and
      // kube writes the name back into both
      if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount || defaultServiceAccountName;
      spec.serviceAccount = spec.serviceAccountName;
      const sa = await lookup(attrs, String(spec.serviceAccountName));
      if (shouldAutomount(sa, spec)) mountToken(spec);
      if (asArray(spec.imagePullSecrets).length === 0) {
        const pulls = asArray(sa.imagePullSecrets).map((r) => ({ name: asObject(r).name ?? '' }));
        if (pulls.length) spec.imagePullSecrets = pulls;
      }
      reorderPodSpec(pod);
      return pod;
    },
    async validate(attrs) {
      const pod = attrs.object as KubeObject;
      if (attrs.operation === 'UPDATE' && attrs.subresource === 'ephemeralcontainers') return validateEphemeralContainers(attrs, pod);
      if (attrs.operation !== 'CREATE' || attrs.subresource) return;
      if (isMirrorPod(pod)) return validateMirrorPod(attrs, pod);
      const spec = asObject(pod.spec);
      const saName = typeof spec.serviceAccountName === 'string' ? spec.serviceAccountName : '';
      if (!saName) throw forbidden(attrs, `no service account specified for pod ${attrs.namespace}/${pod.metadata.name ?? ''}`);
      const sa = await lookup(attrs, saName);
      if (enforcesMountableSecrets(sa)) {
        const why = disallowedSecretReference(sa, spec);
        if (why) throw forbidden(attrs, why);
      }
    },
  };
}

export const serviceAccountFactory: AdmissionPluginFactory = {
  name: 'ServiceAccount',
  create: (deps) => serviceAccountPlugin(deps),
};
