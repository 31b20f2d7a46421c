// The parts of a v1 PodSpec and pod metadata the Pod Security Standards look at, read from
// the JSON objects the registry hands to admission (no decoding into typed structs: the
// checks only need a few optional fields, and absent, null and undefined all mean unset).

export interface SELinuxOptions {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

export interface SecurityProfile {
  type?: string;
  localhostProfile?: string;
}

export interface ContainerSecurityContext {
  privileged?: boolean | null;
  allowPrivilegeEscalation?: boolean | null;
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  procMount?: string | null;
  capabilities?: { add?: string[] | null; drop?: string[] | null } | null;
  seLinuxOptions?: SELinuxOptions | null;
  seccompProfile?: SecurityProfile | null;
  appArmorProfile?: SecurityProfile | null;
  windowsOptions?: { hostProcess?: boolean | null } | null;
}

export interface Container {
  name?: string;
  image?: string;
  ports?: { hostPort?: number | null }[] | null;
  securityContext?: ContainerSecurityContext | null;
}

export interface PodSecurityContext {
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  seLinuxOptions?: SELinuxOptions | null;
  seccompProfile?: SecurityProfile | null;
  appArmorProfile?: SecurityProfile | null;
  sysctls?: { name?: string; value?: string }[] | null;
  windowsOptions?: { hostProcess?: boolean | null } | null;
}

export type Volume = { name?: string } & Record<string, unknown>;

export interface PodSpec {
  hostNetwork?: boolean | null;
  hostPID?: boolean | null;
  hostIPC?: boolean | null;
  hostUsers?: boolean | null;
  os?: { name?: string } | null;
  runtimeClassName?: string | null;
  securityContext?: PodSecurityContext | null;
  volumes?: Volume[] | null;
  containers?: Container[] | null;
  initContainers?: Container[] | null;
  ephemeralContainers?: Container[] | null;
}

export interface PodMeta {
  name?: string;
  annotations?: Record<string, string> | null;
}

/** init containers, then containers, then ephemeral containers: the order kube reports them in */
export function allContainers(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The pod metadata and spec of a pod or of a workload's pod template; undefined when the
 *  object carries none (a ReplicationController without a template). */
export function extractPodSpec(
  resource: string,
  group: string,
  obj: Record<string, unknown>,
): { meta: PodMeta; spec: PodSpec } | undefined {
  const fromTemplate = (t: unknown) => {
    if (!isObject(t)) return undefined;
    const meta = isObject(t.metadata) ? (t.metadata as PodMeta) : {};
    const spec = isObject(t.spec) ? (t.spec as PodSpec) : {};
    return { meta, spec };
  };
  const spec = isObject(obj.spec) ? obj.spec : {};
  switch (`${resource}.${group}`) {
    case 'pods.':
      return { meta: isObject(obj.metadata) ? (obj.metadata as PodMeta) : {}, spec: spec as PodSpec };
    case 'podtemplates.':
      return fromTemplate(obj.template);
    case 'replicationcontrollers.':
    case 'replicasets.apps':
    case 'deployments.apps':
    case 'statefulsets.apps':
    case 'daemonsets.apps':
    case 'jobs.batch':
      return fromTemplate(spec.template);
    case 'cronjobs.batch': {
      const jobTemplate = isObject(spec.jobTemplate) ? spec.jobTemplate : {};
      const jobSpec = isObject(jobTemplate.spec) ? jobTemplate.spec : {};
      return fromTemplate(jobSpec.template);
    }
    default:
      return undefined;
  }
}

/** the group/resources whose objects embed a pod spec (kube's default pod spec extractor) */
export const POD_SPEC_RESOURCES: ReadonlySet<string> = new Set([
  'pods.',
  'podtemplates.',
  'replicationcontrollers.',
  'replicasets.apps',
  'deployments.apps',
  'statefulsets.apps',
  'daemonsets.apps',
  'jobs.batch',
  'cronjobs.batch',
]);
