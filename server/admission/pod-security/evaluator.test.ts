import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePod, forbiddenDetail, forbiddenReason, MAX_MINOR } from './evaluator.js';
import { LATEST, type Level, type LevelVersion } from './policy.js';
import type { PodMeta, PodSpec } from './spec.js';

const opts = { relaxForUserNamespaces: false };

/** a pod that passes restricted:latest; cases change one thing */
function compliant(): PodSpec {
  return {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      {
        name: 'c',
        image: 'nginx',
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      },
    ],
  };
}

function lv(level: Level, minor?: number): LevelVersion {
  return { level, version: minor === undefined ? LATEST : { latest: false, minor } };
}

function detail(level: Level, spec: PodSpec, meta: PodMeta = {}, minor?: number): string {
  return forbiddenDetail(evaluatePod(lv(level, minor), meta, spec, opts));
}

function withContainer(patch: (c: NonNullable<PodSpec['containers']>[number]) => void): PodSpec {
  const s = compliant();
  patch(s.containers![0]);
  return s;
}

interface Case {
  name: string;
  spec: PodSpec;
  meta?: PodMeta;
  /** expected at baseline:latest ('' when allowed) */
  baseline: string;
  /** expected at restricted:latest */
  restricted: string;
}

const cases: Case[] = [
  { name: 'compliant pod', spec: compliant(), baseline: '', restricted: '' },
  {
    name: 'host namespaces',
    spec: { ...compliant(), hostNetwork: true, hostPID: true, hostIPC: true },
    baseline: 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)',
    restricted: 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)',
  },
  {
    name: 'privileged',
    spec: withContainer((c) => (c.securityContext!.privileged = true)),
    baseline: 'privileged (container "c" must not set securityContext.privileged=true)',
    restricted: 'privileged (container "c" must not set securityContext.privileged=true)',
  },
  {
    name: 'non-default capabilities',
    spec: withContainer((c) => (c.securityContext!.capabilities = { drop: ['ALL'], add: ['SYS_ADMIN', 'CHOWN', 'NET_RAW'] })),
    baseline: 'non-default capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
    restricted:
      'unrestricted capabilities (container "c" must not include "CHOWN", "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
  },
  {
    name: 'capabilities without drop ALL',
    spec: withContainer((c) => (c.securityContext!.capabilities = { add: ['NET_BIND_SERVICE'] })),
    baseline: '',
    restricted: 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])',
  },
  {
    name: 'hostPath volume',
    spec: {
      ...compliant(),
      volumes: [
        { name: 'h', hostPath: { path: '/' } },
        { name: 'e', emptyDir: {} },
      ],
    },
    baseline: 'hostPath volumes (volume "h")',
    restricted: 'restricted volume types (volume "h" uses restricted volume type "hostPath")',
  },
  {
    name: 'restricted volume types',
    spec: {
      ...compliant(),
      volumes: [
        { name: 'n', nfs: { server: 'x', path: '/' } },
        { name: 'g', gitRepo: { repository: 'r' } },
      ],
    },
    baseline: '',
    restricted: 'restricted volume types (volumes "n", "g" use restricted volume types "gitRepo", "nfs")',
  },
  {
    name: 'host ports',
    spec: withContainer((c) => (c.ports = [{ hostPort: 8080 }, { hostPort: 80 }])),
    baseline: 'hostPort (container "c" uses hostPorts 80, 8080)',
    restricted: 'hostPort (container "c" uses hostPorts 80, 8080)',
  },
  {
    name: 'AppArmor',
    spec: withContainer((c) => (c.securityContext!.appArmorProfile = { type: 'Unconfined' })),
    meta: { annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' } },
    baseline:
      'forbidden AppArmor profiles (container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/c="unconfined"")',
    restricted:
      'forbidden AppArmor profiles (container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/c="unconfined"")',
  },
  {
    name: 'SELinux',
    spec: { ...compliant(), securityContext: { ...compliant().securityContext, seLinuxOptions: { type: 'spc_t', user: 'u' } } },
    baseline: 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)',
    restricted: 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)',
  },
  {
    name: 'procMount',
    spec: withContainer((c) => (c.securityContext!.procMount = 'Unmasked')),
    baseline: 'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
    restricted: 'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
  },
  {
    name: 'seccomp Unconfined',
    spec: { ...compliant(), securityContext: { runAsNonRoot: true, seccompProfile: { type: 'Unconfined' } } },
    baseline: 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    restricted: 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
  },
  {
    name: 'seccomp unset',
    spec: { ...compliant(), securityContext: { runAsNonRoot: true } },
    baseline: '',
    restricted: 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  },
  {
    name: 'sysctls',
    spec: {
      ...compliant(),
      securityContext: {
        ...compliant().securityContext,
        sysctls: [{ name: 'kernel.msgmax' }, { name: 'net.ipv4.tcp_rmem' }, { name: 'net.core.somaxconn' }],
      },
    },
    baseline: 'forbidden sysctls (kernel.msgmax, net.core.somaxconn)',
    restricted: 'forbidden sysctls (kernel.msgmax, net.core.somaxconn)',
  },
  {
    name: 'hostProcess',
    spec: withContainer((c) => (c.securityContext!.windowsOptions = { hostProcess: true })),
    baseline: 'hostProcess (container "c" must not set securityContext.windowsOptions.hostProcess=true)',
    restricted: 'hostProcess (container "c" must not set securityContext.windowsOptions.hostProcess=true)',
  },
  {
    name: 'privilege escalation',
    spec: withContainer((c) => delete c.securityContext!.allowPrivilegeEscalation),
    baseline: '',
    restricted: 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
  },
  {
    name: 'runAsNonRoot=false',
    spec: withContainer((c) => (c.securityContext!.runAsNonRoot = false)),
    baseline: '',
    restricted: 'runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false)',
  },
  {
    name: 'runAsUser=0',
    spec: { ...compliant(), securityContext: { ...compliant().securityContext, runAsUser: 0 } },
    baseline: '',
    restricted: 'runAsUser=0 (pod must not set runAsUser=0)',
  },
];

describe('pod security checks at latest', () => {
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(detail('baseline', c.spec, c.meta), c.baseline);
      assert.equal(detail('restricted', c.spec, c.meta), c.restricted);
      assert.equal(detail('privileged', c.spec, c.meta), '');
    });
  }

  it('a plain pod at restricted lists every violation in kube order', () => {
    const spec: PodSpec = { containers: [{ name: 'nginx', image: 'nginx' }] };
    assert.equal(
      detail('restricted', spec),
      'allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    assert.equal(
      forbiddenReason(evaluatePod(lv('restricted'), {}, spec, opts)),
      'allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    );
  });

  it('init and ephemeral containers are checked, plural forms', () => {
    const spec: PodSpec = {
      initContainers: [{ name: 'i', securityContext: { privileged: true } }],
      containers: [{ name: 'c', securityContext: { privileged: true } }],
      ephemeralContainers: [{ name: 'e', securityContext: { privileged: true } }],
    };
    assert.equal(detail('baseline', spec), 'privileged (containers "i", "c", "e" must not set securityContext.privileged=true)');
  });

  it('windows pods skip the Linux-only restricted rules from v1.25', () => {
    const spec: PodSpec = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'c' }] };
    assert.equal(detail('restricted', spec), '');
    assert.match(detail('restricted', spec, {}, 24), /allowPrivilegeEscalation != false/);
  });
});

describe('pod security versions', () => {
  it('versions past the newest rule change use the newest rules', () => {
    assert.equal(MAX_MINOR, 32);
    const spec = { ...compliant(), securityContext: { ...compliant().securityContext, sysctls: [{ name: 'net.ipv4.tcp_rmem' }] } };
    assert.equal(detail('baseline', spec, {}, 40), '');
    assert.equal(detail('baseline', spec, {}, 31), 'forbidden sysctls (net.ipv4.tcp_rmem)');
  });

  it('runAsUser applies from v1.23, capabilities drop from v1.22, seccomp fields from v1.19', () => {
    const root = { ...compliant(), securityContext: { ...compliant().securityContext, runAsUser: 0 } };
    assert.equal(detail('restricted', root, {}, 22), '');
    const noDrop = withContainer((c) => delete c.securityContext!.capabilities);
    assert.equal(detail('restricted', noDrop, {}, 21), '');
    assert.match(detail('restricted', noDrop, {}, 22), /unrestricted capabilities/);
    const annotated: PodMeta = { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' } };
    const noSeccomp = { ...compliant(), securityContext: { runAsNonRoot: true } };
    assert.equal(
      detail('restricted', noSeccomp, annotated, 18),
      'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")',
    );
    assert.equal(detail('baseline', noSeccomp, annotated), '');
  });

  it('container_engine_t is allowed from v1.31', () => {
    const spec = withContainer((c) => (c.securityContext!.seLinuxOptions = { type: 'container_engine_t' }));
    assert.equal(detail('baseline', spec), '');
    assert.match(detail('baseline', spec, {}, 30), /type "container_engine_t"/);
  });

  it('user namespace pods skip runAsNonRoot/runAsUser/procMount when relaxed', () => {
    const spec: PodSpec = {
      hostUsers: false,
      securityContext: { runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        { name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, procMount: 'Unmasked' } },
      ],
    };
    assert.equal(forbiddenDetail(evaluatePod(lv('restricted'), {}, spec, { relaxForUserNamespaces: true })), '');
    assert.match(detail('restricted', spec), /runAsNonRoot != true.*runAsUser=0/);
  });
});
