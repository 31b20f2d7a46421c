// For the plugins' tests: admission attributes for a resource served by the registry, and a
// plugin built over a registry with default deps.

import type { KubeObject } from '../../../storage/interface.js';
import type { AdmissionAttributes, AdmissionOperation, ResourceResolver } from '../../registry/rest.js';
import type { UserInfo } from '../../machinery/user.js';
import type { ReviewAuthorizer } from '../../machinery/access-review.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory, AdmissionRequestContext } from '../plugin.js';

export const testUser: UserInfo = { username: 'alice', groups: ['system:authenticated'] };

export function attrsFor(
  resolver: ResourceResolver,
  gvr: { group: string; version: string; resource: string },
  operation: AdmissionOperation,
  object: KubeObject | null,
  oldObject: KubeObject | null = null,
  extra: Partial<AdmissionAttributes> = {},
): AdmissionAttributes {
  const rest = resolver.lookup(gvr.group, gvr.version, gvr.resource);
  if (!rest) throw new Error(`not served: ${gvr.group}/${gvr.version}/${gvr.resource}`);
  const obj = object ?? oldObject;
  return {
    operation,
    resource: rest.info,
    namespace: obj?.metadata.namespace ?? '',
    name: obj?.metadata.name ?? '',
    object,
    oldObject,
    dryRun: false,
    user: testUser,
    ...extra,
  };
}

export function requestContext(): AdmissionRequestContext {
  return { warnings: [], auditAnnotations: {} };
}

export async function buildPlugin(
  factory: AdmissionPluginFactory,
  resolver: ResourceResolver,
  opts: { authorizer?: ReviewAuthorizer; featureGates?: Record<string, boolean>; signal?: AbortSignal; config?: unknown } = {},
): Promise<AdmissionPlugin> {
  const deps: AdmissionDeps = {
    resolver,
    signal: opts.signal ?? new AbortController().signal,
    featureGates: opts.featureGates ?? {},
    log: () => undefined,
    authorizer: opts.authorizer,
  };
  return factory.create(deps, opts.config);
}

/** runs the plugin as the chain would: handles, then mutate, then validate */
export async function admit(plugin: AdmissionPlugin, attrs: AdmissionAttributes): Promise<KubeObject | null> {
  if (plugin.handles && !plugin.handles(attrs)) return attrs.object;
  const ctx = requestContext();
  let obj = attrs.object;
  if (plugin.mutate && obj) obj = await plugin.mutate({ ...attrs, object: obj }, ctx);
  if (plugin.validate) await plugin.validate({ ...attrs, object: obj }, ctx);
  return obj;
}
