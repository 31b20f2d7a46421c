// The Kubernetes release kapi implements, and kube-apiserver's version.Info (fields in its order).

export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor: string;
  emulationMinor: string;
  minCompatibilityMajor: string;
  minCompatibilityMinor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

/** the Kubernetes release whose API this server implements */
export const KUBERNETES_MAJOR = '1';
export const KUBERNETES_MINOR = '33';

export function defaultVersionInfo(overrides: Partial<VersionInfo> = {}): VersionInfo {
  const info: VersionInfo = {
    major: KUBERNETES_MAJOR,
    minor: KUBERNETES_MINOR,
    emulationMajor: KUBERNETES_MAJOR,
    emulationMinor: KUBERNETES_MINOR,
    minCompatibilityMajor: KUBERNETES_MAJOR,
    minCompatibilityMinor: String(Number(KUBERNETES_MINOR) - 1),
    gitVersion: `v${KUBERNETES_MAJOR}.${KUBERNETES_MINOR}.0-kapi`,
    gitCommit: process.env.KAPI_GIT_COMMIT ?? '',
    gitTreeState: process.env.KAPI_GIT_COMMIT ? 'clean' : '',
    buildDate: process.env.KAPI_BUILD_DATE ?? '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${ARCH[process.arch] ?? process.arch}`,
  };
  // keep the field order whatever the overrides' order
  for (const k of Object.keys(info) as (keyof VersionInfo)[]) {
    const v = overrides[k];
    if (v !== undefined) info[k] = v;
  }
  return info;
}
