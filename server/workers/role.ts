// What a worker process of a --workers replica learns from its primary, through the
// environment of the fork (the command line is the primary's, unchanged).

/** this process is worker `index` of `count`; the primary did the one-time work */
export interface WorkerRole {
  index: number;
  count: number;
  /** the embedded etcd member the primary runs; undefined with --etcd-servers */
  embeddedEtcdEndpoints?: string[];
}

const INDEX = 'KAPI_WORKER_INDEX';
const COUNT = 'KAPI_WORKER_COUNT';
const ETCD = 'KAPI_WORKER_EMBEDDED_ETCD';

export function workerRoleEnv(role: WorkerRole): Record<string, string> {
  const env: Record<string, string> = { [INDEX]: String(role.index), [COUNT]: String(role.count) };
  if (role.embeddedEtcdEndpoints) env[ETCD] = role.embeddedEtcdEndpoints.join(',');
  return env;
}

/** the role given to this process, or undefined when it is not a worker */
export function workerRoleFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerRole | undefined {
  const index = env[INDEX];
  const count = env[COUNT];
  if (index === undefined || count === undefined) return undefined;
  const etcd = env[ETCD];
  return { index: Number(index), count: Number(count), embeddedEtcdEndpoints: etcd ? etcd.split(',') : undefined };
}
