// Builds kapi's authorization from kube-apiserver's flags: --authorization-mode (AlwaysAllow,
// AlwaysDeny, RBAC, Node, Webhook in order; the first allow or deny decides, all-no-opinion
// is a 403) with --authorization-webhook-*, or --authorization-config (a file, reloaded on
// change and every 60 s; mixing it with the mode or webhook flags is a start-up error).
// Also what the rest of the server needs from it: the answers of access reviews and rules
// reviews, and the RBAC escalation checks. RBAC and Node read watch-fed caches that start
// once the registry exists (`start`).

import { unwatchFile, watchFile } from 'node:fs';
import type { FlagValue } from '../machinery/flagset.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from './authorizer.js';
import type { AccessDecision, AccessReviewRequest, ReviewAuthorizer } from '../machinery/access-review.js';
import type { RulesResolver, RulesReview } from '../registry/virtual/reviews.js';
import type { ResourceResolver } from '../registry/rest.js';
import type { EscalationChecker } from '../registry/rbac/escalation-checker.js';
import type { UserInfo } from '../machinery/user.js';
import { createLogger, type Logger } from '../log.js';
import {
  AuthorizationConfigError,
  loadAuthorizationConfiguration,
  type AuthorizationConfiguration,
  type AuthorizerConfig,
} from './config.js';
import { createNodeAuthorizer, informerNodeGraph, nodeNameOf, type NodeGraph } from './node.js';
import { createRbacAuthorizer, type RulesInfo } from './rbac/authorizer.js';
import { rbacEscalationChecker } from './rbac/escalation.js';
import { startRbacInformers, type RbacInformers } from './rbac/informer-store.js';
import { RuleResolver } from './rbac/resolver.js';
import type { RbacStore } from './rbac/store.js';
import { ruleToJson } from './rbac/types.js';
import { SYSTEM_PRIVILEGED_GROUP } from './rbac/subjects.js';
import { startPolicyReconciler } from './reconcile.js';
import { createWebhookAuthorizer } from './webhook.js';
import { AbacPolicyError, createAbacAuthorizer, loadAbacPolicies } from './abac.js';
import { aggregate } from '../authn/jwt/config.js';
import { validateAuthorizationConfiguration } from './config.js';

const log = createLogger('authorization');

export class AuthorizationSetupError extends Error {}

export const MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;

export interface AuthorizationInputs {
  values: ReadonlyMap<string, FlagValue>;
  explicitlySet: ReadonlySet<string>;
  resolvePath: (p: string) => string;
  /** how often the configuration file is checked (default 60 s; changes are seen sooner) */
  configReloadIntervalMs?: number;
  /** told about every automatic reload of a changed configuration file (for its metrics) */
  onConfigReload?: (status: 'success' | 'failure') => void;
}

export interface Authorization {
  /** the request authorizer (the handler chain and impersonation ask it) */
  authorizer: Authorizer;
  /** answers SubjectAccessReview and friends as a request would be authorized */
  reviews: ReviewAuthorizer;
  /** answers SelfSubjectRulesReview */
  rules: RulesResolver;
  /** RBAC's escalation checks on role and binding writes (undefined without RBAC) */
  escalation?: EscalationChecker;
  /** the authorizer names in order, for logs */
  readonly describe: string[];
  /** starts the caches, the default policy reconciliation (RBAC) and config reloading */
  start(resolver: ResourceResolver, signal: AbortSignal): { rbacBootstrapped: Promise<void> };
  reloadConfig(): boolean;
  close(): void;
}

interface Named {
  type: string;
  name: string;
  authorizer: Authorizer;
  /** lists rules for rules reviews (RBAC, AlwaysAllow); others make a review incomplete */
  rulesFor?(user: UserInfo, namespace: string): Promise<RulesInfo>;
  close?(): void;
}

const alwaysAllow: Named = {
  type: 'AlwaysAllow',
  name: 'AlwaysAllow',
  authorizer: { authorize: async () => ({ decision: 'allow' }) },
  rulesFor: async () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
};

const alwaysDeny: Named = {
  type: 'AlwaysDeny',
  name: 'AlwaysDeny',
  authorizer: { authorize: async () => ({ decision: 'noOpinion', reason: 'Everything is forbidden.' }) },
  rulesFor: async () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
};

/** members of system:masters may do anything, whatever the configured authorizers say
 *  (kube-apiserver puts this ahead of them) */
const privilegedGroups: Named = {
  type: 'PrivilegedGroups',
  name: 'system:masters',
  authorizer: {
    authorize: async (attrs) => (attrs.user.groups.includes(SYSTEM_PRIVILEGED_GROUP) ? { decision: 'allow' } : { decision: 'noOpinion' }),
  },
  rulesFor: async (user) =>
    user.groups.includes(SYSTEM_PRIVILEGED_GROUP)
      ? {
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          incomplete: false,
        }
      : { resourceRules: [], nonResourceRules: [], incomplete: false },
};

/** the order-preserving union (kube's union authorizer): reasons of no-opinions are joined */
function union(list: () => readonly Named[]): Authorizer {
  return {
    async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
      const reasons: string[] = [];
      for (const a of list()) {
        let r: AuthorizationResult;
        try {
          r = await a.authorizer.authorize(attrs);
        } catch (err) {
          log.v(2).info('authorizer failed', { authorizer: a.name, err: (err as Error).message });
          continue;
        }
        if (r.decision !== 'noOpinion') return r;
        if (r.reason) reasons.push(r.reason);
      }
      return { decision: 'noOpinion', reason: reasons.length ? reasons.join('\n') : undefined };
    },
  };
}

function str(v: ReadonlyMap<string, FlagValue>, n: string): string {
  return (v.get(n) as string | undefined) ?? '';
}

/** kube-apiserver's checks of the legacy flags */
export function validateModeFlags(values: ReadonlyMap<string, FlagValue>, explicitlySet: ReadonlySet<string>): string[] {
  const modes = ((values.get('authorization-mode') as string[] | undefined) ?? []).filter((m) => m !== '');
  const errs: string[] = [];
  if (str(values, 'authorization-config')) {
    const legacy = [
      'authorization-mode',
      'authorization-policy-file',
      'authorization-webhook-config-file',
      'authorization-webhook-version',
      'authorization-webhook-cache-authorized-ttl',
      'authorization-webhook-cache-unauthorized-ttl',
    ];
    if (legacy.some((f) => explicitlySet.has(f))) {
      errs.push('--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined');
    }
    return errs;
  }
  if (modes.length === 0) errs.push('at least one authorization-mode must be passed');
  const seen = new Set<string>();
  for (const m of modes) {
    if (!(MODES as readonly string[]).includes(m)) errs.push(`authorization-mode ${JSON.stringify(m)} is not a valid mode`);
    if (seen.has(m)) errs.push(`authorization-mode ${JSON.stringify(m)} has mode specified more than once`);
    seen.add(m);
  }
  if (modes.includes('ABAC') && !str(values, 'authorization-policy-file'))
    errs.push("authorization-mode ABAC's authorization policy file not passed");
  if (!modes.includes('ABAC') && str(values, 'authorization-policy-file'))
    errs.push('cannot specify --authorization-policy-file without mode ABAC');
  if (modes.includes('Webhook') && !str(values, 'authorization-webhook-config-file'))
    errs.push("authorization-mode Webhook's authorization config file not passed");
  if (!modes.includes('Webhook') && str(values, 'authorization-webhook-config-file'))
    errs.push('cannot specify --authorization-webhook-config-file without mode Webhook');
  return errs;
}

function rulesInfoToReview(info: RulesInfo): Pick<RulesReview, 'resourceRules' | 'nonResourceRules'> {
  return {
    resourceRules: info.resourceRules.map((r) => {
      const out: Record<string, unknown> = { verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [] };
      if (r.resourceNames?.length) out.resourceNames = r.resourceNames;
      return out;
    }),
    nonResourceRules: info.nonResourceRules.map((r) => ruleToJson(r)),
  };
}

/** the attributes an access review asks about (kube's authorizationutil.AuthorizationAttributesFrom) */
export function reviewAttributes(req: AccessReviewRequest): AuthorizationAttributes {
  const user = req.user;
  if (req.resourceAttributes) {
    const ra = req.resourceAttributes;
    const s = (k: string) => (typeof ra[k] === 'string' ? (ra[k] as string) : '');
    const fs = ra.fieldSelector as { rawSelector?: string } | undefined;
    const ls = ra.labelSelector as { rawSelector?: string } | undefined;
    return {
      user,
      verb: s('verb'),
      isResourceRequest: true,
      path: '',
      apiGroup: s('group'),
      apiVersion: s('version'),
      resource: s('resource'),
      subresource: s('subresource'),
      namespace: s('namespace'),
      name: s('name'),
      fieldSelector: fs?.rawSelector || undefined,
      labelSelector: ls?.rawSelector || undefined,
    };
  }
  const na = req.nonResourceAttributes ?? {};
  return {
    user,
    verb: typeof na.verb === 'string' ? na.verb : '',
    isResourceRequest: false,
    path: typeof na.path === 'string' ? na.path : '',
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
}

export function buildAuthorization(input: AuthorizationInputs): Authorization {
  const v = input.values;
  const problems = validateModeFlags(v, input.explicitlySet);
  if (problems.length) throw new AuthorizationSetupError(problems.length === 1 ? problems[0]! : `[${problems.join(', ')}]`);

  // RBAC and Node read caches started later; until then they wait for them
  let rbacInformers: RbacInformers | undefined;
  let nodeGraph: (NodeGraph & { synced: Promise<void>; stop(): void }) | undefined;
  let markStarted!: () => void;
  const started = new Promise<void>((r) => {
    markStarted = r;
  });
  const rbacReady = () => started.then(() => rbacInformers?.synced);
  const nodeReady = () => started.then(() => nodeGraph?.synced);
  const lazyStore: RbacStore = {
    getRole: (ns, name) => rbacInformers!.store.getRole(ns, name),
    getClusterRole: (name) => rbacInformers!.store.getClusterRole(name),
    listRoleBindings: (ns) => rbacInformers?.store.listRoleBindings(ns) ?? [],
    listClusterRoleBindings: () => rbacInformers?.store.listClusterRoleBindings() ?? [],
  };
  const resolver = new RuleResolver(lazyStore);
  const rbac = createRbacAuthorizer(resolver, rbacReady, () => rbacInformers?.generation());
  const node = createNodeAuthorizer(() => nodeGraph, nodeReady);
  const nodeNamed: Named = {
    type: 'Node',
    name: 'node',
    authorizer: node,
    rulesFor: async (user) =>
      nodeNameOf(user)
        ? { resourceRules: [], nonResourceRules: [], incomplete: true, error: 'node authorizer does not support user rule resolution' }
        : { resourceRules: [], nonResourceRules: [], incomplete: false },
  };
  const rbacNamed = (name: string): Named => ({ type: 'RBAC', name, authorizer: rbac, rulesFor: (u, ns) => rbac.rulesFor(u, ns) });
  const webhookRules = async (): Promise<RulesInfo> => ({
    resourceRules: [],
    nonResourceRules: [],
    incomplete: true,
    error: 'webhook authorizer does not support user rule resolution',
  });

  const configFile = str(v, 'authorization-config') ? input.resolvePath(str(v, 'authorization-config')) : '';
  let chain: Named[];
  let configText = '';

  const fromConfig = (config: AuthorizationConfiguration): Named[] =>
    config.authorizers.map((a: AuthorizerConfig): Named => {
      if (a.type === 'RBAC') return rbacNamed(a.name);
      if (a.type === 'Node') return { ...nodeNamed, name: a.name };
      const w = a.webhook!;
      if (w.connectionInfo.type === 'InClusterConfig')
        throw new AuthorizationSetupError(
          `authorizers[${config.authorizers.indexOf(a)}].webhook.connectionInfo.type: Invalid value: "InClusterConfig": in-cluster configuration is not supported for the API server's own authorization webhooks`,
        );
      const wa = createWebhookAuthorizer({
        name: a.name,
        kubeConfigFile: w.connectionInfo.kubeConfigFile!,
        subjectAccessReviewVersion: w.subjectAccessReviewVersion,
        authorizedTTLMs: w.authorizedTTLMs,
        unauthorizedTTLMs: w.unauthorizedTTLMs,
        timeoutMs: w.timeoutMs,
        failurePolicy: w.failurePolicy,
        matchConditions: w.matchConditions.map((m) => m.expression),
        onError: (err) => log.v(1).info('webhook authorizer failed', { authorizer: a.name, err: err.message }),
      });
      return { type: 'Webhook', name: a.name, authorizer: wa, rulesFor: webhookRules, close: () => wa.close() };
    });

  if (configFile) {
    try {
      const loaded = loadAuthorizationConfiguration(configFile);
      configText = loaded.text;
      chain = fromConfig(loaded.config);
    } catch (err) {
      if (err instanceof AuthorizationConfigError || err instanceof AuthorizationSetupError) throw new AuthorizationSetupError(err.message);
      throw err;
    }
  } else {
    const modes = ((v.get('authorization-mode') as string[] | undefined) ?? []).filter((m) => m !== '');
    chain = modes.map((m): Named => {
      switch (m) {
        case 'AlwaysAllow':
          return alwaysAllow;
        case 'AlwaysDeny':
          return alwaysDeny;
        case 'RBAC':
          return rbacNamed('rbac');
        case 'Node':
          return nodeNamed;
        case 'ABAC': {
          let abac;
          try {
            abac = createAbacAuthorizer(loadAbacPolicies(input.resolvePath(str(v, 'authorization-policy-file'))));
          } catch (err) {
            if (err instanceof AbacPolicyError) throw new AuthorizationSetupError(err.message);
            throw err;
          }
          return { type: 'ABAC', name: 'abac', authorizer: abac, rulesFor: (u, ns) => abac.rulesFor(u, ns) };
        }
        default: {
          const wa = createWebhookAuthorizer({
            name: 'webhook',
            kubeConfigFile: input.resolvePath(str(v, 'authorization-webhook-config-file')),
            subjectAccessReviewVersion: str(v, 'authorization-webhook-version') || 'v1beta1',
            authorizedTTLMs: (v.get('authorization-webhook-cache-authorized-ttl') as number | undefined) ?? 300_000,
            unauthorizedTTLMs: (v.get('authorization-webhook-cache-unauthorized-ttl') as number | undefined) ?? 30_000,
            timeoutMs: 30_000,
            failurePolicy: 'NoOpinion',
            onError: (err) => log.v(1).info('webhook authorizer failed', { err: err.message }),
          });
          return { type: 'Webhook', name: 'webhook', authorizer: wa, rulesFor: webhookRules, close: () => wa.close() };
        }
      }
    });
  }

  const usesRbac = () => chain.some((a) => a.type === 'RBAC');
  const usesNode = () => chain.some((a) => a.type === 'Node');
  const authorizer = union(() => [privilegedGroups, ...chain]);
  const rbacInitially = usesRbac();

  const reloadConfig = (): boolean => {
    if (!configFile) return false;
    let loaded;
    try {
      loaded = loadAuthorizationConfiguration(configFile);
    } catch (err) {
      log.error('reloading the authorization configuration failed, keeping the previous one', { err: (err as Error).message });
      input.onConfigReload?.('failure');
      return false;
    }
    if (loaded.text === configText) return false;
    // only webhooks may come and go: the other authorizers must stay as they were
    const fixed = (c: { authorizers: { type: string; name: string }[] }) =>
      c.authorizers
        .filter((a) => a.type !== 'Webhook')
        .map((a) => `${a.type}/${a.name}`)
        .join(',');
    const before = chain
      .filter((a) => a.type !== 'Webhook')
      .map((a) => `${a.type}/${a.name}`)
      .join(',');
    if (fixed(loaded.config) !== before) {
      log.error('reloading the authorization configuration failed, keeping the previous one', {
        err: 'non-webhook authorizers cannot be added, removed or renamed',
      });
      input.onConfigReload?.('failure');
      return false;
    }
    const errs = validateAuthorizationConfiguration(loaded.config);
    if (errs.length) {
      log.error('reloading the authorization configuration failed, keeping the previous one', { err: aggregate(errs) });
      input.onConfigReload?.('failure');
      return false;
    }
    let next: Named[];
    try {
      next = fromConfig(loaded.config);
    } catch (err) {
      log.error('reloading the authorization configuration failed, keeping the previous one', { err: (err as Error).message });
      input.onConfigReload?.('failure');
      return false;
    }
    const old = chain;
    chain = next;
    configText = loaded.text;
    for (const a of old) if (!next.includes(a)) a.close?.();
    log.info('authorization configuration reloaded', { authorizers: chain.map((a) => `${a.type}/${a.name}`).join(',') });
    input.onConfigReload?.('success');
    return true;
  };

  let timer: NodeJS.Timeout | undefined;
  const closers: (() => void)[] = [];

  const reviews: ReviewAuthorizer = {
    async authorize(req): Promise<AccessDecision> {
      const r = await authorizer.authorize(reviewAttributes(req));
      const out: AccessDecision = { allowed: r.decision === 'allow' };
      if (r.decision === 'deny') out.denied = true;
      if (r.reason) out.reason = r.reason;
      return out;
    },
  };
  const rules: RulesResolver = {
    async rulesFor(user, namespace): Promise<RulesReview> {
      const review: RulesReview = { resourceRules: [], nonResourceRules: [], incomplete: false };
      const errors: string[] = [];
      for (const a of [privilegedGroups, ...chain]) {
        const info = a.rulesFor ? await a.rulesFor(user, namespace) : { resourceRules: [], nonResourceRules: [], incomplete: true };
        const j = rulesInfoToReview(info);
        review.resourceRules.push(...j.resourceRules);
        review.nonResourceRules.push(...j.nonResourceRules);
        if (info.incomplete) review.incomplete = true;
        if (info.error) errors.push(info.error);
      }
      if (errors.length) review.evaluationError = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
      return review;
    },
  };

  return {
    authorizer,
    reviews,
    rules,
    escalation: rbacInitially ? rbacEscalationChecker({ authorizer, resolver }) : undefined,
    get describe() {
      return chain.map((a) => `${a.type}/${a.name}`);
    },
    start(registry, signal) {
      let rbacBootstrapped: Promise<void> = Promise.resolve();
      if (usesRbac()) {
        rbacInformers = startRbacInformers(registry, log as Logger, signal);
        closers.push(() => rbacInformers?.stop());
      }
      // kube's rbac/bootstrap-roles hook belongs to the RBAC API, not to the authorizer: the
      // default roles and bindings exist whenever the API is served, whatever the mode
      if (registry.lookup('rbac.authorization.k8s.io', 'v1', 'clusterroles')) {
        rbacBootstrapped = startPolicyReconciler(registry, log as Logger, signal).done;
      }
      if (usesNode()) {
        nodeGraph = informerNodeGraph(registry, log as Logger, signal);
        closers.push(() => nodeGraph?.stop());
      }
      markStarted();
      if (configFile) {
        const interval = input.configReloadIntervalMs ?? 60_000;
        watchFile(configFile, { interval: Math.min(interval, 2000) }, () => reloadConfig());
        closers.push(() => unwatchFile(configFile));
        timer = setInterval(() => reloadConfig(), interval);
        timer.unref();
      }
      return { rbacBootstrapped };
    },
    reloadConfig,
    close() {
      if (timer) clearInterval(timer);
      for (const c of closers) c();
      for (const a of chain) a.close?.();
      markStarted();
    },
  };
}
