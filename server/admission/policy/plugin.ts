// The ValidatingAdmissionPolicy admission plugin. Every replica follows the policies and
// bindings with its own watch-fed informers (a change made through any replica applies here
// within the watch latency), compiles each policy once per resourceVersion, and reads
// namespaces and params through the registry at request time, so they are always current.
// It also keeps the policies' status.observedGeneration/typeChecking (./status.ts).

import { policiesWithBindings } from './pairing.js';
import type { KubeObject } from '../../../storage/interface.js';
import { startInformer, type Informer } from '../../authz/informer.js';
import { internalContext, isNotFound } from '../../controllers/util.js';
import { StatusError } from '../../machinery/status.js';
import type { Logger, LogFields } from '../../log.js';
import type { AdmissionAttributes, ResourceResolver, RESTResource } from '../../registry/rest.js';
import type { LabelSelector } from '../../selectors/labels.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory, AdmissionRequestContext } from '../plugin.js';
import { PolicyCache } from './compiled.js';
import { followPolicyStatus } from './status.js';
import { dispatch, type DispatchEnvironment, type ParamResource, type PolicyHook } from './dispatcher.js';
import type { BindingObject, ParamKind, PolicyObject } from './types.js';
import { addWarnings } from '../../machinery/warnings.js';

const GROUP = 'admissionregistration.k8s.io';
const VERSION = 'v1';
const FIELD_MANAGER = 'kube-apiserver';
/** how long a request waits for the first list of policies and bindings */
const SYNC_WAIT_MS = 10_000;

export function policyLogger(log: AdmissionDeps['log'], component = 'validating-admission-policy'): Logger {
  const at = (level: 'info' | 'warn' | 'error') => (message: string, fields?: LogFields) => log(level, message, { component, ...fields });
  const logger: Logger = {
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    v: () => ({ info: () => {} }),
    named: (c) => policyLogger(log, c),
  };
  return logger;
}

function servedKind(resolver: ResourceResolver, kind: ParamKind): RESTResource | undefined {
  const [group, version] = (kind.apiVersion ?? '').includes('/') ? (kind.apiVersion ?? '').split('/', 2) : ['', kind.apiVersion ?? ''];
  return resolver.all().find((r) => !r.subresource && r.info.group === group && r.info.version === version && r.info.kind === kind.kind);
}

function paramResourceOf(rest: RESTResource, signal: AbortSignal): ParamResource {
  return {
    namespaced: rest.info.namespaced,
    async get(namespace, name) {
      try {
        return await rest.get(internalContext(FIELD_MANAGER, namespace, signal), name, {});
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async list(namespace: string, selector: LabelSelector) {
      const list = await rest.list(internalContext(FIELD_MANAGER, namespace, signal), {});
      return list.items.filter((o) => selector.matches((o.metadata.labels as Record<string, string> | undefined) ?? {}));
    },
  };
}

/** namespaces, equivalent resources, params and the authorizer as the policy plugins read them */
export function policyEnvironment(deps: AdmissionDeps): DispatchEnvironment {
  const { resolver, signal } = deps;
  const namespacesRest = resolver.lookup('', 'v1', 'namespaces');
  const getNamespace = async (name: string): Promise<KubeObject | undefined> => {
    if (!namespacesRest) return undefined;
    try {
      return await namespacesRest.get(internalContext(FIELD_MANAGER, '', signal), name, {});
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  return {
    authorizer: deps.authorizer,
    namespace: getNamespace,
    async namespaceLabels(name) {
      const ns = await getNamespace(name);
      return ns ? ((ns.metadata.labels as Record<string, string> | undefined) ?? {}) : undefined;
    },
    equivalents(info) {
      return resolver
        .all()
        .filter((r) => !r.subresource && r.info.group === info.group && r.info.resource === info.resource)
        .map((r) => r.info);
    },
    paramResource(kind) {
      const rest = servedKind(resolver, kind);
      return rest ? paramResourceOf(rest, signal) : undefined;
    },
  };
}

/** waits (a bounded time) for the informers' first list; kube's 403 when it does not come */
export async function waitForInformers(informers: readonly Informer[], attrs: AdmissionAttributes): Promise<void> {
  if (informers.every((i) => i.hasSynced)) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), SYNC_WAIT_MS)));
  const r = await Promise.race([Promise.all(informers.map((i) => i.synced)), timeout]);
  clearTimeout(timer);
  if (r === 'timeout') {
    const group = attrs.resource.group;
    const qualified = group ? `${attrs.resource.resource}.${group}` : attrs.resource.resource;
    const name = attrs.name || 'Unknown';
    throw new StatusError(403, 'Forbidden', `${qualified} "${name}" is forbidden: not yet ready to handle request`, {
      name,
      group,
      kind: attrs.resource.resource,
    });
  }
}

export interface ValidatingAdmissionPolicyPlugin extends AdmissionPlugin {
  /** resolves once policies and bindings have been listed */
  readonly synced: Promise<void>;
}

export function createValidatingAdmissionPolicyPlugin(deps: AdmissionDeps): ValidatingAdmissionPolicyPlugin {
  const { resolver, signal } = deps;
  const log = policyLogger(deps.log);
  const policiesRest = resolver.lookup(GROUP, VERSION, 'validatingadmissionpolicies');
  const bindingsRest = resolver.lookup(GROUP, VERSION, 'validatingadmissionpolicybindings');
  if (!policiesRest || !bindingsRest) throw new Error(`ValidatingAdmissionPolicy: ${GROUP}/${VERSION} is not served`);
  const policies: Informer = startInformer(policiesRest, log, signal);
  const bindings: Informer = startInformer(bindingsRest, log, signal);
  const synced = Promise.all([policies.synced, bindings.synced]).then(() => undefined);
  followPolicyStatus(policies, resolver, log, signal);
  const cache = new PolicyCache();

  const env = policyEnvironment(deps);

  const hooks = (): PolicyHook[] =>
    policiesWithBindings(policies.list() as unknown as PolicyObject[], bindings.list() as unknown as BindingObject[], cache);

  return {
    name: 'ValidatingAdmissionPolicy',
    readsOptions: true,
    synced,
    handles() {
      // before the first list we cannot know: let validate wait for it
      return !bindings.hasSynced || bindings.list().length > 0;
    },
    async validate(attrs: AdmissionAttributes, ctx: AdmissionRequestContext) {
      await waitForInformers([policies, bindings], attrs);
      const active = hooks();
      if (active.length === 0) return;
      const result = await dispatch(active, attrs, env);
      addWarnings(ctx.warnings, result.warnings);
      Object.assign(ctx.auditAnnotations, result.auditAnnotations);
      if (result.denial) throw result.denial;
    },
  };
}

export const validatingAdmissionPolicyFactory: AdmissionPluginFactory = {
  name: 'ValidatingAdmissionPolicy',
  create: (deps) => createValidatingAdmissionPolicyPlugin(deps),
};
