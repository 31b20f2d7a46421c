// kube-apiserver's PodSecurity admission plugin: enforces the Pod Security Standards level a
// namespace's labels select on pods (create, and updates that change images or add ephemeral
// containers), audits and warns on them, and only audits and warns on the pod templates of
// workload resources (they are never refused: their pods are). Namespace writes are refused
// when their pod-security labels are invalid; tightening the enforce label warns about the
// existing pods that would now be refused.

import type { ReadFence } from '../../../storage/read-fence.js';
import type { KubeObject } from '../../../storage/interface.js';
import { internalContext } from '../../controllers/util.js';
import { errors, type StatusError } from '../../machinery/status.js';
import { errorString, invalidError, type FieldError } from '../../machinery/validation/field-error.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory, AdmissionRequestContext } from '../plugin.js';
import type { CheckOptions } from './check.js';
import { loadPodSecurityConfig, type PodSecurityConfig } from './config.js';
import { evaluatePod, forbiddenDetail, forbiddenReason } from './evaluator.js';
import {
  AUDIT_LABEL,
  AUDIT_VERSION_LABEL,
  compareLevels,
  ENFORCE_LABEL,
  ENFORCE_VERSION_LABEL,
  equivalentLevelVersion,
  fullyPrivileged,
  LABEL_PREFIX,
  levelVersionString,
  policyToEvaluate,
  sameLevelVersion,
  versionString,
  WARN_LABEL,
  WARN_VERSION_LABEL,
  type LevelVersion,
  type Policy,
} from './policy.js';
import { extractPodSpec, POD_SPEC_RESOURCES, type Container, type PodMeta, type PodSpec } from './spec.js';
import { addWarnings } from '../../machinery/warnings.js';

export const PLUGIN_NAME = 'PodSecurity';

/** pod subresources whose writes cannot change what the policy looks at */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** kube checks at most this many existing pods when a namespace's enforce level tightens */
const MAX_PODS_TO_CHECK = 3000;

/** and spends at most this long on them */
const POD_CHECK_TIME_LIMIT_MS = 1000;

const FIELD_MANAGER = 'pod-security-admission';

type Annotations = Record<string, string>;

interface Outcome {
  warnings: string[];
  annotations: Annotations;
  /** set when the request is refused */
  error?: StatusError;
}

function labelsOf(obj: KubeObject | null): Record<string, string> | undefined {
  return (obj?.metadata?.labels as Record<string, string> | undefined) ?? undefined;
}

function aggregate(errs: readonly FieldError[]): string {
  const msgs = errs.map(errorString);
  return msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
}

export class PodSecurityPlugin implements AdmissionPlugin {
  readonly name = PLUGIN_NAME;
  private readonly checkOptions: CheckOptions;

  constructor(
    private readonly deps: AdmissionDeps,
    private readonly config: PodSecurityConfig,
  ) {
    this.checkOptions = { relaxForUserNamespaces: deps.featureGates['UserNamespacesPodSecurityStandards'] === true };
  }

  handles(attrs: AdmissionAttributes): boolean {
    if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return false;
    const key = `${attrs.resource.resource}.${attrs.resource.group}`;
    return key === 'namespaces.' || POD_SPEC_RESOURCES.has(key);
  }

  async validate(attrs: AdmissionAttributes, ctx: AdmissionRequestContext): Promise<void> {
    if (!this.handles(attrs) || !attrs.object) return;
    const outcome = await this.evaluate(attrs, ctx.readFence);
    addWarnings(ctx.warnings, outcome.warnings);
    for (const [k, v] of Object.entries(outcome.annotations)) ctx.auditAnnotations[LABEL_PREFIX + k] = v;
    if (outcome.error) throw outcome.error;
  }

  /** the decision, warnings and audit annotations (unprefixed) for one request */
  async evaluate(attrs: AdmissionAttributes, fence?: ReadFence): Promise<Outcome> {
    const key = `${attrs.resource.resource}.${attrs.resource.group}`;
    if (key === 'namespaces.') return this.validateNamespace(attrs);
    if (key === 'pods.') return this.validatePod(attrs, fence);
    return this.validatePodController(attrs, fence);
  }

  private get defaults(): Policy {
    return this.config.defaults;
  }

  private exemptNamespace(ns: string): boolean {
    return ns !== '' && this.config.exemptions.namespaces.includes(ns);
  }

  private exemptUser(user: string): boolean {
    return user !== '' && this.config.exemptions.usernames.includes(user);
  }

  private exemptRuntimeClass(rc: string | null | undefined): boolean {
    return !!rc && this.config.exemptions.runtimeClasses.includes(rc);
  }

  private async validateNamespace(attrs: AdmissionAttributes): Promise<Outcome> {
    const allowed: Outcome = { warnings: [], annotations: {} };
    if (attrs.subresource) return allowed;
    const ns = attrs.object as KubeObject;
    const name = ns.metadata?.name ?? attrs.name;
    const labels = labelsOf(ns);
    const { policy: newPolicy, errors: newErrs } = policyToEvaluate(labels, this.defaults);
    const invalid = () => ({ ...allowed, error: invalidError('', 'Namespace', name, newErrs) });
    const exemptWarning = () => {
      const w = this.exemptNamespaceWarning(name, newPolicy, labels ?? {});
      return w ? { ...allowed, warnings: [w] } : allowed;
    };
    if (attrs.operation === 'CREATE') {
      if (newErrs.length) return invalid();
      // kube looks at the request's namespace, which a namespace create does not have
      return this.exemptNamespace(attrs.namespace) ? exemptWarning() : allowed;
    }
    const { policy: oldPolicy, errors: oldErrs } = policyToEvaluate(labelsOf(attrs.oldObject), this.defaults);
    if (newErrs.length && (!oldErrs.length || aggregate(newErrs) !== aggregate(oldErrs))) return invalid();
    // nothing to dry-run when enforcement did not get stricter
    if (sameLevelVersion(newPolicy.enforce, oldPolicy.enforce)) return allowed;
    if (newPolicy.enforce.level === 'privileged') return allowed;
    if (
      versionString(newPolicy.enforce.version) === versionString(oldPolicy.enforce.version) &&
      compareLevels(newPolicy.enforce.level, oldPolicy.enforce.level) < 1
    ) {
      return allowed;
    }
    if (this.exemptNamespace(attrs.namespace || name)) return exemptWarning();
    return { ...allowed, warnings: await this.evaluatePodsInNamespace(name, newPolicy.enforce) };
  }

  private exemptNamespaceWarning(ns: string, p: Policy, labels: Record<string, string>): string {
    if (fullyPrivileged(p)) return '';
    const d = this.defaults;
    if (
      equivalentLevelVersion(p.enforce, d.enforce) &&
      equivalentLevelVersion(p.audit, d.audit) &&
      equivalentLevelVersion(p.warn, d.warn)
    ) {
      return '';
    }
    const parts: string[] = [];
    const add = (mode: string, lv: LevelVersion, levelLabel: string, versionLabel: string) => {
      if (lv.level !== 'privileged' && (levelLabel in labels || versionLabel in labels)) {
        parts.push(`${mode}=${levelVersionString(lv)}`);
      }
    };
    add('enforce', p.enforce, ENFORCE_LABEL, ENFORCE_VERSION_LABEL);
    add('audit', p.audit, AUDIT_LABEL, AUDIT_VERSION_LABEL);
    add('warn', p.warn, WARN_LABEL, WARN_VERSION_LABEL);
    return `namespace ${JSON.stringify(ns)} is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`;
  }

  private async evaluatePodsInNamespace(ns: string, enforce: LevelVersion): Promise<string[]> {
    let pods: KubeObject[];
    try {
      const resource = this.deps.resolver.lookup('', 'v1', 'pods');
      if (!resource) throw new Error('pods are not served');
      pods = (await resource.list(internalContext(FIELD_MANAGER, ns), {})).items;
    } catch (err) {
      this.deps.log('error', 'PodSecurity: failed to list pods', { namespace: ns, error: String(err) });
      return ['failed to list pods while checking new PodSecurity enforce level'];
    }
    const prioritized = this.prioritizePods(pods);
    const total = prioritized.length;
    const checked = prioritized.slice(0, MAX_PODS_TO_CHECK);
    const counts = new Map<string, { podName: string; count: number }>();
    const deadline = Date.now() + POD_CHECK_TIME_LIMIT_MS;
    let evaluated = 0;
    for (const pod of checked) {
      if (evaluated > 0 && Date.now() > deadline) break;
      evaluated++;
      const violations = evaluatePod(enforce, (pod.metadata ?? {}) as PodMeta, (pod.spec ?? {}) as PodSpec, this.checkOptions);
      if (!violations.length) continue;
      const warning = forbiddenReason(violations);
      const podName = pod.metadata?.name ?? '';
      const c = counts.get(warning);
      if (!c) counts.set(warning, { podName, count: 1 });
      else {
        if (podName < c.podName) c.podName = podName;
        c.count++;
      }
    }
    const warnings: string[] = [];
    if (evaluated < total) {
      warnings.push(`new PodSecurity enforce level only checked against the first ${evaluated} of ${total} existing pods`);
    }
    if (counts.size) {
      warnings.push(
        `existing pods in namespace ${JSON.stringify(ns)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`,
      );
    }
    const podWarnings = [...counts].map(([warning, c]) => {
      if (c.count === 1) return `${c.podName}: ${warning}`;
      if (c.count === 2) return `${c.podName} (and 1 other pod): ${warning}`;
      return `${c.podName} (and ${c.count - 1} other pods): ${warning}`;
    });
    podWarnings.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return [...warnings, ...podWarnings];
  }

  /** one pod per controller first (the others from the same controller after), without
   *  pods of exempt runtime classes */
  private prioritizePods(pods: KubeObject[]): KubeObject[] {
    const first: KubeObject[] = [];
    const duplicates: KubeObject[] = [];
    const seen = new Set<string>();
    for (const pod of pods) {
      if (this.exemptRuntimeClass((pod.spec as PodSpec | undefined)?.runtimeClassName)) continue;
      const owners = (pod.metadata?.ownerReferences ?? []) as { uid?: string; controller?: boolean }[];
      const controller = owners.find((o) => o.controller === true);
      if (!controller) first.push(pod);
      else if (seen.has(controller.uid ?? '')) duplicates.push(pod);
      else {
        seen.add(controller.uid ?? '');
        first.push(pod);
      }
    }
    return [...first, ...duplicates];
  }

  private async namespaceLabels(ns: string, fence: ReadFence | undefined): Promise<Record<string, string> | undefined> {
    const resource = this.deps.resolver.lookup('', 'v1', 'namespaces');
    if (!resource) throw new Error('namespaces are not served');
    const ctx = internalContext(FIELD_MANAGER, '', undefined, fence);
    // only its labels are read: the shared copy, decoded once per stored version
    if (resource.getShared) {
      const shared = await resource.getShared(ctx, ns, {});
      if (!shared) throw errors.notFound({ group: '', resource: 'namespaces', name: ns });
      return labelsOf(shared);
    }
    return labelsOf(await resource.get(ctx, ns, {}));
  }

  private async validatePod(attrs: AdmissionAttributes, fence: ReadFence | undefined): Promise<Outcome> {
    if (attrs.subresource && IGNORED_POD_SUBRESOURCES.has(attrs.subresource)) return { warnings: [], annotations: {} };
    if (this.exemptNamespace(attrs.namespace)) return { warnings: [], annotations: { exempt: 'namespace' } };
    if (this.exemptUser(attrs.user.username)) return { warnings: [], annotations: { exempt: 'user' } };
    let labels: Record<string, string> | undefined;
    try {
      labels = await this.namespaceLabels(attrs.namespace, fence);
    } catch (err) {
      const message = `failed to lookup namespace ${JSON.stringify(attrs.namespace)}`;
      const error = errors.internal(message);
      return { warnings: [], annotations: { error: `${error.message}: ${String(err)}` }, error };
    }
    const { policy, errors: policyErrs } = policyToEvaluate(labels, this.defaults);
    if (!policyErrs.length && fullyPrivileged(policy)) {
      return { warnings: [], annotations: { 'enforce-policy': 'privileged:latest' } };
    }
    const pod = attrs.object as KubeObject;
    if (attrs.operation === 'UPDATE' && attrs.oldObject && !isSignificantPodUpdate(pod, attrs.oldObject)) {
      return { warnings: [], annotations: {} };
    }
    const meta = (pod.metadata ?? {}) as PodMeta;
    const spec = (pod.spec ?? {}) as PodSpec;
    return this.evaluatePodSpec(attrs, policy, policyErrs, meta, spec, true);
  }

  private async validatePodController(attrs: AdmissionAttributes, fence: ReadFence | undefined): Promise<Outcome> {
    const allowed: Outcome = { warnings: [], annotations: {} };
    if (attrs.subresource) return allowed;
    if (this.exemptNamespace(attrs.namespace)) return { ...allowed, annotations: { exempt: 'namespace' } };
    if (this.exemptUser(attrs.user.username)) return { ...allowed, annotations: { exempt: 'user' } };
    let labels: Record<string, string> | undefined;
    try {
      labels = await this.namespaceLabels(attrs.namespace, fence);
    } catch (err) {
      return { ...allowed, annotations: { error: `failed to lookup namespace ${JSON.stringify(attrs.namespace)}: ${String(err)}` } };
    }
    const { policy, errors: policyErrs } = policyToEvaluate(labels, this.defaults);
    if (!policyErrs.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return allowed;
    const extracted = extractPodSpec(attrs.resource.resource, attrs.resource.group, attrs.object as KubeObject);
    if (!extracted) return allowed;
    return this.evaluatePodSpec(attrs, policy, policyErrs, extracted.meta, extracted.spec, false);
  }

  private evaluatePodSpec(
    attrs: AdmissionAttributes,
    policy: Policy,
    policyErrs: FieldError[],
    meta: PodMeta,
    spec: PodSpec,
    enforce: boolean,
  ): Outcome {
    if (this.exemptRuntimeClass(spec.runtimeClassName)) return { warnings: [], annotations: { exempt: 'runtimeClass' } };
    const annotations: Annotations = {};
    if (policyErrs.length) annotations.error = `Failed to parse policy: ${aggregate(policyErrs)}`;
    const results = new Map<string, ReturnType<typeof evaluatePod>>();
    const run = (lv: LevelVersion) => {
      const k = levelVersionString(lv);
      let r = results.get(k);
      if (!r) {
        r = evaluatePod(lv, meta, spec, this.checkOptions);
        results.set(k, r);
      }
      return r;
    };
    const outcome: Outcome = { warnings: [], annotations };
    if (enforce) {
      annotations['enforce-policy'] = levelVersionString(policy.enforce);
      const violations = run(policy.enforce);
      if (violations.length) {
        const name = attrs.name || (attrs.object?.metadata?.name ?? '');
        outcome.error = errors.forbidden(
          { group: attrs.resource.group, resource: attrs.resource.resource, name },
          `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${forbiddenDetail(violations)}`,
        );
      }
    }
    const audit = run(policy.audit);
    if (audit.length) {
      annotations['audit-violations'] =
        `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${forbiddenDetail(audit)}`;
    }
    if (!outcome.error) {
      const warn = run(policy.warn);
      if (warn.length) {
        outcome.warnings.push(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${forbiddenDetail(warn)}`);
      }
    }
    return outcome;
  }
}

function containersOf(obj: KubeObject, field: 'containers' | 'initContainers' | 'ephemeralContainers'): Container[] {
  return ((obj.spec as PodSpec | undefined)?.[field] ?? []) as Container[];
}

/** only image changes and new or changed ephemeral containers can make a pod less compliant
 *  once created (the rest of the spec is immutable) */
export function isSignificantPodUpdate(pod: KubeObject, oldPod: KubeObject): boolean {
  for (const field of ['containers', 'initContainers'] as const) {
    const now = containersOf(pod, field);
    const before = containersOf(oldPod, field);
    if (now.length !== before.length) return true;
    if (now.some((c, i) => c.image !== before[i].image)) return true;
  }
  const oldEphemeral = containersOf(oldPod, 'ephemeralContainers');
  for (const c of containersOf(pod, 'ephemeralContainers')) {
    const old = oldEphemeral.find((o) => o.name === c.name);
    if (!old || old.image !== c.image) return true;
  }
  return false;
}

export const podSecurityFactory: AdmissionPluginFactory = {
  name: PLUGIN_NAME,
  create(deps: AdmissionDeps, config: unknown) {
    return new PodSecurityPlugin(deps, loadPodSecurityConfig(config));
  },
};
