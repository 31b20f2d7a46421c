// The baseline level's checks (pod-security-admission 1.33): host namespaces, privileged
// containers, capabilities beyond the default set, hostPath volumes, host ports, AppArmor,
// SELinux, /proc mount, seccomp, sysctls and Windows hostProcess.

import {
  containersPhrase,
  joinQuote,
  pluralize,
  quoteValue,
  relaxedForUserNamespace,
  sortedSet,
  type Check,
  type CheckFn,
} from './check.js';
import { allContainers, type PodSpec, type SELinuxOptions } from './spec.js';

const hostNamespaces: CheckFn = (_meta, spec) => {
  const set: string[] = [];
  if (spec.hostNetwork) set.push('hostNetwork=true');
  if (spec.hostPID) set.push('hostPID=true');
  if (spec.hostIPC) set.push('hostIPC=true');
  return set.length ? { reason: 'host namespaces', detail: set.join(', ') } : undefined;
};

const privileged: CheckFn = (_meta, spec) => {
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.privileged === true)
    .map((c) => c.name ?? '');
  if (!bad.length) return undefined;
  return { reason: 'privileged', detail: `${containersPhrase(bad)} must not set securityContext.privileged=true` };
};

/** the container runtime's default capability set: adding these changes nothing */
const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const capabilitiesBaseline: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const caps: string[] = [];
  for (const c of allContainers(spec)) {
    const added = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    if (added.length) {
      bad.push(c.name ?? '');
      caps.push(...added);
    }
  }
  if (!bad.length) return undefined;
  return {
    reason: 'non-default capabilities',
    detail: `${containersPhrase(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
  };
};

const hostPathVolumes: CheckFn = (_meta, spec) => {
  const bad = (spec.volumes ?? []).filter((v) => v.hostPath != null).map((v) => v.name ?? '');
  if (!bad.length) return undefined;
  return { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}` };
};

const hostPorts: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of allContainers(spec)) {
    const used = (c.ports ?? []).filter((p) => p.hostPort != null && p.hostPort !== 0).map((p) => String(p.hostPort));
    if (used.length) {
      bad.push(c.name ?? '');
      ports.push(...used);
    }
  }
  if (!bad.length) return undefined;
  const unique = sortedSet(ports);
  return {
    reason: 'hostPort',
    detail: `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', unique.length)} ${unique.join(', ')}`,
  };
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

const appArmorProfile: CheckFn = (meta, spec) => {
  const allowedType = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';
  const setters: string[] = [];
  const badValues: string[] = [];
  const podProfile = spec.securityContext?.appArmorProfile;
  if (podProfile && !allowedType(podProfile.type)) {
    setters.push('pod');
    badValues.push(podProfile.type ?? '');
  }
  const bad: string[] = [];
  for (const c of allContainers(spec)) {
    const p = c.securityContext?.appArmorProfile;
    if (p && !allowedType(p.type)) {
      bad.push(c.name ?? '');
      badValues.push(p.type ?? '');
    }
  }
  if (bad.length) setters.push(containersPhrase(bad));
  const annotations: string[] = [];
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    if (!k.startsWith(APPARMOR_ANNOTATION_PREFIX)) continue;
    if (v === '' || v === 'runtime/default' || v.startsWith('localhost/')) continue;
    annotations.push(`${k}=${quoteValue(v)}`);
  }
  const values = sortedSet(badValues);
  if (annotations.length) {
    values.push(...sortedSet(annotations));
    setters.push(pluralize('annotation', 'annotations', annotations.length));
  }
  if (!setters.length) return undefined;
  return {
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    detail: `${setters.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  };
};

function seLinuxOptionsCheck(allowedTypes: ReadonlySet<string>): CheckFn {
  return (_meta, spec) => {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (o: SELinuxOptions) => {
      let ok = true;
      if (!allowedTypes.has(o.type ?? '')) {
        ok = false;
        badTypes.push(o.type ?? '');
      }
      if (o.user) {
        ok = false;
        setUser = true;
      }
      if (o.role) {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const setters: string[] = [];
    const podOpts = spec.securityContext?.seLinuxOptions;
    if (podOpts && !valid(podOpts)) setters.push('pod');
    const bad: string[] = [];
    for (const c of allContainers(spec)) {
      const o = c.securityContext?.seLinuxOptions;
      if (o && !valid(o)) bad.push(c.name ?? '');
    }
    if (bad.length) setters.push(containersPhrase(bad));
    if (!setters.length) return undefined;
    const data: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length) data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return {
      reason: 'seLinuxOptions',
      detail: `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`,
    };
  };
}

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

const procMount: CheckFn = (_meta, spec, opts) => {
  if (relaxedForUserNamespace(spec, opts)) return undefined;
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of allContainers(spec)) {
    const pm = c.securityContext?.procMount;
    if (pm != null && pm !== 'Default') {
      bad.push(c.name ?? '');
      types.push(pm);
    }
  }
  if (!bad.length) return undefined;
  return {
    reason: 'procMount',
    detail: `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  };
};

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

/** before v1.19 seccomp was set through annotations */
const seccompBaselineAnnotations: CheckFn = (meta, spec) => {
  const annotations = meta.annotations ?? {};
  const validValue = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const forbidden: string[] = [];
  const podValue = annotations[SECCOMP_POD_ANNOTATION];
  if (podValue !== undefined && !validValue(podValue)) forbidden.push(`${SECCOMP_POD_ANNOTATION}=${quoteValue(podValue)}`);
  for (const c of allContainers(spec)) {
    const key = SECCOMP_CONTAINER_ANNOTATION_PREFIX + (c.name ?? '');
    const v = annotations[key];
    if (v !== undefined && !validValue(v)) forbidden.push(`${key}=${quoteValue(v)}`);
  }
  const unique = sortedSet(forbidden);
  if (!unique.length) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `forbidden ${pluralize('annotation', 'annotations', unique.length)} ${unique.join(', ')}`,
  };
};

export function validSeccompType(t: string | undefined): boolean {
  return t === 'RuntimeDefault' || t === 'Localhost';
}

/** the pod and containers that set a seccomp type other than RuntimeDefault/Localhost */
export function explicitSeccompViolation(spec: PodSpec): { setters: string[]; values: string[] } {
  const setters: string[] = [];
  const values: string[] = [];
  const podProfile = spec.securityContext?.seccompProfile;
  if (podProfile && !validSeccompType(podProfile.type)) {
    setters.push('pod');
    values.push(podProfile.type ?? '');
  }
  const bad: string[] = [];
  for (const c of allContainers(spec)) {
    const p = c.securityContext?.seccompProfile;
    if (p && !validSeccompType(p.type)) {
      bad.push(c.name ?? '');
      values.push(p.type ?? '');
    }
  }
  if (bad.length) setters.push(containersPhrase(bad));
  return { setters, values: sortedSet(values) };
}

const seccompBaselineFields: CheckFn = (_meta, spec) => {
  const { setters, values } = explicitSeccompViolation(spec);
  if (!setters.length) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(values)}`,
  };
};

/** namespaced sysctls isolated from other pods, by the policy version that allowed them */
const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

function sysctlsCheck(allowedList: readonly string[]): CheckFn {
  const allowed = new Set(allowedList);
  return (_meta, spec) => {
    const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name ?? '').filter((n) => !allowed.has(n));
    return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
  };
}

const windowsHostProcess: CheckFn = (_meta, spec) => {
  const setters: string[] = [];
  if (spec.securityContext?.windowsOptions?.hostProcess === true) setters.push('pod');
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.windowsOptions?.hostProcess === true)
    .map((c) => c.name ?? '');
  if (bad.length) setters.push(containersPhrase(bad));
  if (!setters.length) return undefined;
  return { reason: 'hostProcess', detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
};

export const CAPABILITIES_BASELINE_ID = 'capabilities_baseline';
export const HOST_PATH_VOLUMES_ID = 'hostPathVolumes';
export const SECCOMP_BASELINE_ID = 'seccompProfile_baseline';

export const BASELINE_CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minMinor: 0, fn: appArmorProfile }] },
  { id: CAPABILITIES_BASELINE_ID, level: 'baseline', versions: [{ minMinor: 0, fn: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minMinor: 0, fn: hostNamespaces }] },
  { id: HOST_PATH_VOLUMES_ID, level: 'baseline', versions: [{ minMinor: 0, fn: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minMinor: 0, fn: hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ minMinor: 0, fn: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ minMinor: 0, fn: procMount }] },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { minMinor: 0, fn: seLinuxOptionsCheck(SELINUX_TYPES_1_0) },
      { minMinor: 31, fn: seLinuxOptionsCheck(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: SECCOMP_BASELINE_ID,
    level: 'baseline',
    versions: [
      { minMinor: 0, fn: seccompBaselineAnnotations },
      { minMinor: 19, fn: seccompBaselineFields },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minMinor: 0, fn: sysctlsCheck(SYSCTLS_1_0) },
      { minMinor: 27, fn: sysctlsCheck(SYSCTLS_1_27) },
      { minMinor: 29, fn: sysctlsCheck(SYSCTLS_1_29) },
      { minMinor: 32, fn: sysctlsCheck(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minMinor: 0, fn: windowsHostProcess }] },
];
