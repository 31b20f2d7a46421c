// Keeps a local APIService for every group version this server serves itself, as kube's
// autoregister and CRD registration controllers do: the built-in ones (labelled
// `kube-aggregator.kubernetes.io/automanaged: onstart`, kube's priorities) and those of the
// CRDs (`automanaged: "true"`, group priority 1000, version priority 100). A CRD group
// version that is no longer served loses its APIService; an `onstart` one that is no longer
// served (a --runtime-config change) is removed on the first pass only, as kube does at
// start-up. APIServices without the label are the users' and never touched.

import type { KubeObject } from '../../storage/interface.js';
import { internalContext, isAlreadyExists, isNotFound } from '../controllers/util.js';
import type { Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';
import { APIREGISTRATION_GROUP } from './api-services.js';

export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';

export interface LocalGroupVersion {
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  /** `onstart` for built-in group versions, `true` for those of CRDs */
  managed: 'onstart' | 'true';
}

export const apiServiceName = (group: string, version: string): string => `${version}.${group}`;

function desiredObject(gv: LocalGroupVersion): KubeObject {
  return {
    apiVersion: `${APIREGISTRATION_GROUP}/v1`,
    kind: 'APIService',
    metadata: { name: apiServiceName(gv.group, gv.version), labels: { [AUTOMANAGED_LABEL]: gv.managed } },
    // the core group's APIService has no group field at all (omitempty in kube's type)
    spec: {
      ...(gv.group ? { group: gv.group } : {}),
      version: gv.version,
      groupPriorityMinimum: gv.groupPriorityMinimum,
      versionPriority: gv.versionPriority,
    },
  } as KubeObject;
}

interface SpecShape {
  group?: string;
  version?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
  service?: unknown;
}

function specMatches(current: KubeObject, gv: LocalGroupVersion): boolean {
  const spec = ((current as { spec?: SpecShape }).spec ?? {}) as SpecShape;
  return (
    (spec.group ?? '') === gv.group &&
    spec.version === gv.version &&
    spec.groupPriorityMinimum === gv.groupPriorityMinimum &&
    spec.versionPriority === gv.versionPriority &&
    !spec.service
  );
}

/** one pass: create what is missing, correct what drifted, remove what is no longer served */
export async function syncLocalAPIServices(
  resolver: ResourceResolver,
  desired: LocalGroupVersion[],
  opts: { firstPass: boolean; log: Logger; signal?: AbortSignal },
): Promise<void> {
  const rest = resolver.lookup(APIREGISTRATION_GROUP, 'v1', 'apiservices');
  if (!rest) return;
  const ctx = internalContext('kube-apiserver-autoregistration', '', opts.signal);
  const existing = new Map<string, KubeObject>();
  for (const item of (await rest.list(ctx, {})).items) existing.set(item.metadata.name ?? '', item);
  const wanted = new Map(desired.map((gv) => [apiServiceName(gv.group, gv.version), gv]));
  for (const [name, gv] of wanted) {
    const current = existing.get(name);
    try {
      if (!current) {
        await rest.create(ctx, desiredObject(gv));
        continue;
      }
      const label = current.metadata.labels?.[AUTOMANAGED_LABEL];
      if (label === undefined || specMatches(current, gv)) continue;
      await rest.update(
        ctx,
        name,
        (now) => {
          if (!now) throw Object.assign(new Error('gone'), { code: 404 });
          const desiredSpec = (desiredObject(gv) as unknown as { spec: SpecShape }).spec;
          return {
            ...now,
            metadata: { ...now.metadata, labels: { ...(now.metadata.labels ?? {}), [AUTOMANAGED_LABEL]: gv.managed } },
            spec: desiredSpec,
          } as KubeObject;
        },
        { allowCreate: false },
      );
    } catch (err) {
      if (isAlreadyExists(err) || isNotFound(err)) continue;
      opts.log.warn('could not register a local APIService', { apiservice: name, error: (err as Error).message });
    }
  }
  for (const [name, current] of existing) {
    if (wanted.has(name)) continue;
    const label = current.metadata.labels?.[AUTOMANAGED_LABEL];
    if (label !== 'true' && !(label === 'onstart' && opts.firstPass)) continue;
    try {
      await rest.delete(ctx, name, {});
    } catch (err) {
      if (!isNotFound(err)) opts.log.warn('could not remove a local APIService', { apiservice: name, error: (err as Error).message });
    }
  }
}
