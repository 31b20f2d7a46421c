// The restricted level's checks (pod-security-admission 1.33): volume types, privilege
// escalation, running as non-root, runAsUser=0, a required seccomp profile, and capabilities
// (drop ALL, add only NET_BIND_SERVICE). Some replace a baseline check at their versions.

import {
  containersPhrase,
  isWindows,
  joinQuote,
  pluralize,
  relaxedForUserNamespace,
  sortedSet,
  type Check,
  type CheckFn,
} from './check.js';
import {
  CAPABILITIES_BASELINE_ID,
  HOST_PATH_VOLUMES_ID,
  SECCOMP_BASELINE_ID,
  explicitSeccompViolation,
  validSeccompType,
} from './checks-baseline.js';
import { allContainers } from './spec.js';

/** the volume sources a restricted pod may use */
const ALLOWED_VOLUME_SOURCES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

/** the names kube reports forbidden sources under, in the order it looks for them */
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

const restrictedVolumes: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const v of spec.volumes ?? []) {
    if (ALLOWED_VOLUME_SOURCES.some((k) => v[k] != null)) continue;
    bad.push(v.name ?? '');
    types.push(RESTRICTED_VOLUME_SOURCES.find((k) => v[k] != null) ?? 'unknown');
  }
  if (!bad.length) return undefined;
  const unique = sortedSet(types);
  return {
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', unique.length)} ${joinQuote(unique)}`,
  };
};

const allowPrivilegeEscalation_1_8: CheckFn = (_meta, spec) => {
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.allowPrivilegeEscalation !== false)
    .map((c) => c.name ?? '');
  if (!bad.length) return undefined;
  return {
    reason: 'allowPrivilegeEscalation != false',
    detail: `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`,
  };
};

/** from v1.25 the Linux-only rules do not apply to pods that declare os.name=windows */
function linuxOnly(fn: CheckFn): CheckFn {
  return (meta, spec, opts) => (isWindows(spec) ? undefined : fn(meta, spec, opts));
}

const runAsNonRoot: CheckFn = (_meta, spec, opts) => {
  if (relaxedForUserNamespace(spec, opts)) return undefined;
  const setters: string[] = [];
  let podNonRoot = false;
  const podValue = spec.securityContext?.runAsNonRoot;
  if (podValue != null) {
    if (podValue) podNonRoot = true;
    else setters.push('pod');
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of allContainers(spec)) {
    const v = c.securityContext?.runAsNonRoot;
    if (v != null) {
      if (!v) explicit.push(c.name ?? '');
    } else if (!podNonRoot) {
      implicit.push(c.name ?? '');
    }
  }
  if (explicit.length) setters.push(containersPhrase(explicit));
  if (setters.length) {
    return { reason: 'runAsNonRoot != true', detail: `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  }
  if (implicit.length) {
    return { reason: 'runAsNonRoot != true', detail: `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true` };
  }
  return undefined;
};

const runAsUser: CheckFn = (_meta, spec, opts) => {
  if (relaxedForUserNamespace(spec, opts)) return undefined;
  const setters: string[] = [];
  if (spec.securityContext?.runAsUser === 0) setters.push('pod');
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.runAsUser === 0)
    .map((c) => c.name ?? '');
  if (bad.length) setters.push(containersPhrase(bad));
  if (!setters.length) return undefined;
  return { reason: 'runAsUser=0', detail: `${setters.join(' and ')} must not set runAsUser=0` };
};

const seccompRestricted: CheckFn = (_meta, spec) => {
  const { setters, values } = explicitSeccompViolation(spec);
  if (setters.length) {
    return {
      reason: 'seccompProfile',
      detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(values)}`,
    };
  }
  const podSet = validSeccompType(spec.securityContext?.seccompProfile?.type);
  if (podSet) return undefined;
  const implicit = allContainers(spec)
    .filter((c) => c.securityContext?.seccompProfile == null)
    .map((c) => c.name ?? '');
  if (!implicit.length) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
  };
};

const capabilitiesRestricted: CheckFn = (_meta, spec) => {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbidden: string[] = [];
  for (const c of allContainers(spec)) {
    const caps = c.securityContext?.capabilities;
    if (caps == null) {
      missingDropAll.push(c.name ?? '');
      continue;
    }
    if (!(caps.drop ?? []).includes('ALL')) missingDropAll.push(c.name ?? '');
    const added = (caps.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (added.length) {
      addingForbidden.push(c.name ?? '');
      forbidden.push(...added);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length) details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length) {
    details.push(
      `${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`,
    );
  }
  return details.length ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
};

export const RESTRICTED_CHECKS: readonly Check[] = [
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { minMinor: 8, fn: allowPrivilegeEscalation_1_8 },
      { minMinor: 25, fn: linuxOnly(allowPrivilegeEscalation_1_8) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minMinor: 22, fn: capabilitiesRestricted, overrides: [CAPABILITIES_BASELINE_ID] },
      { minMinor: 25, fn: linuxOnly(capabilitiesRestricted), overrides: [CAPABILITIES_BASELINE_ID] },
    ],
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    versions: [{ minMinor: 0, fn: restrictedVolumes, overrides: [HOST_PATH_VOLUMES_ID] }],
  },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minMinor: 0, fn: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minMinor: 23, fn: runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minMinor: 19, fn: seccompRestricted, overrides: [SECCOMP_BASELINE_ID] },
      { minMinor: 25, fn: linuxOnly(seccompRestricted), overrides: [SECCOMP_BASELINE_ID] },
    ],
  },
];
