// The APIServices every replica follows (a watch through the registry): which group versions
// are served by another server, where that server is, how its certificate is checked, and
// whether the availability controller last found it Available. Reads are synchronous.

import type { KubeObject } from '../../storage/interface.js';
import { startInformer, type Informer } from '../authz/informer.js';
import type { Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';

export const APIREGISTRATION_GROUP = 'apiregistration.k8s.io';

export interface ServiceReference {
  namespace: string;
  name: string;
  port: number;
}

export interface APIServiceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** the parts of an APIService the aggregator acts on */
export interface APIServiceView {
  name: string;
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  /** absent: served by this server itself (a local APIService) */
  service?: ServiceReference;
  /** PEM, decoded from spec.caBundle */
  caBundle?: string;
  insecureSkipTLSVerify: boolean;
  conditions: APIServiceCondition[];
}

interface APIServiceSpecShape {
  group?: string;
  version?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
  service?: { namespace?: string; name?: string; port?: number } | null;
  caBundle?: string;
  insecureSkipTLSVerify?: boolean;
}

export function viewOf(obj: KubeObject): APIServiceView {
  const spec = ((obj as { spec?: APIServiceSpecShape }).spec ?? {}) as APIServiceSpecShape;
  const status = (obj as { status?: { conditions?: APIServiceCondition[] } }).status ?? {};
  const svc = spec.service;
  return {
    name: obj.metadata.name ?? '',
    group: spec.group ?? '',
    version: spec.version ?? '',
    groupPriorityMinimum: spec.groupPriorityMinimum ?? 0,
    versionPriority: spec.versionPriority ?? 0,
    service: svc && svc.name ? { namespace: svc.namespace ?? '', name: svc.name, port: svc.port ?? 443 } : undefined,
    caBundle: spec.caBundle ? Buffer.from(spec.caBundle, 'base64').toString('utf8') : undefined,
    insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    conditions: Array.isArray(status.conditions) ? status.conditions : [],
  };
}

export function isAvailable(api: APIServiceView): boolean {
  return api.conditions.some((c) => c.type === 'Available' && c.status === 'True');
}

export interface APIServiceIndex {
  /** the APIService served elsewhere for this group version, if any */
  remote(group: string, version: string): APIServiceView | undefined;
  /** every APIService served elsewhere, by name */
  remotes(): APIServiceView[];
  all(): APIServiceView[];
  /** grows whenever an APIService changes */
  readonly generation: number;
  onChange(listener: () => void): () => void;
  readonly synced: Promise<void>;
  readonly informer: Informer;
  stop(): void;
}

export function startAPIServiceIndex(resolver: ResourceResolver, log: Logger, signal: AbortSignal): APIServiceIndex | undefined {
  const rest = resolver.lookup(APIREGISTRATION_GROUP, 'v1', 'apiservices');
  if (!rest) return undefined;
  const informer = startInformer(rest, log, signal);
  let generation = 0;
  let byGroupVersion: Map<string, APIServiceView> | undefined;
  let views: APIServiceView[] | undefined;
  const listeners = new Set<() => void>();
  informer.onChange(() => {
    generation++;
    byGroupVersion = undefined;
    views = undefined;
    for (const l of listeners) l();
  });
  const all = (): APIServiceView[] =>
    (views ??= informer
      .list()
      .map(viewOf)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
  const remoteMap = (): Map<string, APIServiceView> => {
    if (!byGroupVersion) {
      byGroupVersion = new Map();
      for (const v of all()) if (v.service) byGroupVersion.set(`${v.group}/${v.version}`, v);
    }
    return byGroupVersion;
  };
  return {
    remote: (group, version) => remoteMap().get(`${group}/${version}`),
    remotes: () => [...remoteMap().values()],
    all,
    get generation() {
      return generation;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    synced: informer.synced,
    informer,
    stop: () => informer.stop(),
  };
}
