// Puts the default RBAC policy in place at every start (kube-apiserver's rbac/bootstrap-roles
// post-start hook): creates what is missing and, unless an object is annotated
// rbac.authorization.kubernetes.io/autoupdate: "false", adds missing rules, subjects, labels,
// annotations and aggregation selectors to what is there (nothing is taken away). A binding
// whose roleRef differs is deleted and created again. Every replica runs it: writes are
// conditional on the resourceVersion read, and a lost race is simply retried.

import type { KubeObject } from '../../storage/interface.js';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { internalContext, isAlreadyExists, isConflict, isNotFound, sleep } from '../controllers/util.js';
import { jsonEqual } from '../registry/object.js';
import type { Logger } from '../log.js';
import { AUTOUPDATE_ANNOTATION, defaultPolicy } from './bootstrap-policy.js';
import { covers } from './rbac/rules.js';
import { bindingOf, RBAC_GROUP, roleRefOf, ruleToJson, rulesOf } from './rbac/types.js';

const fieldManager = 'kube-apiserver';

type Kind = 'role' | 'binding';

function mergeStringMap(
  expected: Record<string, string> | undefined,
  existing: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (!expected && !existing) return undefined;
  return { ...(expected ?? {}), ...(existing ?? {}) };
}

function selectorsOf(obj: KubeObject): unknown[] {
  const rule = obj.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined;
  return Array.isArray(rule?.clusterRoleSelectors) ? rule.clusterRoleSelectors : [];
}

/** the reconciled role, or undefined when `existing` needs no change */
export function reconcileRole(expected: KubeObject, existing: KubeObject): KubeObject | undefined {
  const out: KubeObject = { ...existing, metadata: { ...existing.metadata } };
  out.metadata.labels = mergeStringMap(expected.metadata.labels, existing.metadata.labels);
  out.metadata.annotations = mergeStringMap(expected.metadata.annotations, existing.metadata.annotations);
  const expectedSelectors = selectorsOf(expected);
  if (expected.aggregationRule) {
    const have = selectorsOf(existing);
    const add = expectedSelectors.filter((s) => !have.some((h) => jsonEqual(h, s)));
    if (!existing.aggregationRule || add.length) out.aggregationRule = { clusterRoleSelectors: [...have, ...add] };
  }
  const { missing } = covers(rulesOf(existing), rulesOf(expected));
  if (missing.length) out.rules = [...(Array.isArray(existing.rules) ? existing.rules : []), ...missing.map(ruleToJson)];
  const changed =
    !jsonEqual(out.metadata.labels, existing.metadata.labels) ||
    !jsonEqual(out.metadata.annotations, existing.metadata.annotations) ||
    !jsonEqual(out.aggregationRule, existing.aggregationRule) ||
    missing.length > 0;
  return changed ? out : undefined;
}

/** the reconciled binding ('recreate' when its roleRef must change), or undefined */
export function reconcileBinding(expected: KubeObject, existing: KubeObject): KubeObject | 'recreate' | undefined {
  if (!jsonEqual(roleRefOf(expected), roleRefOf(existing))) return 'recreate';
  const out: KubeObject = { ...existing, metadata: { ...existing.metadata } };
  out.metadata.labels = mergeStringMap(expected.metadata.labels, existing.metadata.labels);
  out.metadata.annotations = mergeStringMap(expected.metadata.annotations, existing.metadata.annotations);
  const have = Array.isArray(existing.subjects) ? existing.subjects : [];
  const want = bindingOf(expected).subjects;
  const haveParsed = bindingOf(existing).subjects;
  const add = (Array.isArray(expected.subjects) ? expected.subjects : []).filter((_, i) => !haveParsed.some((h) => jsonEqual(h, want[i])));
  if (add.length) out.subjects = [...have, ...add];
  const changed =
    add.length > 0 ||
    !jsonEqual(out.metadata.labels, existing.metadata.labels) ||
    !jsonEqual(out.metadata.annotations, existing.metadata.annotations);
  return changed ? out : undefined;
}

async function reconcileOne(
  res: RESTResource,
  expected: KubeObject,
  kind: Kind,
  signal?: AbortSignal,
): Promise<'created' | 'updated' | 'unchanged' | 'skipped'> {
  const name = expected.metadata.name ?? '';
  const ctx = internalContext(fieldManager, expected.metadata.namespace ?? '', signal);
  for (let attempt = 0; ; attempt++) {
    let existing: KubeObject | undefined;
    try {
      existing = await res.get(ctx, name, {});
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      if (!existing) {
        await res.create(ctx, structuredClone(expected));
        return 'created';
      }
      if (existing.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false') return 'skipped';
      const next = kind === 'role' ? reconcileRole(expected, existing) : reconcileBinding(expected, existing);
      if (!next) return 'unchanged';
      if (next === 'recreate') {
        await res.delete(ctx, name, { preconditions: { uid: existing.metadata.uid, resourceVersion: existing.metadata.resourceVersion } });
        continue;
      }
      const rv = existing.metadata.resourceVersion;
      await res.update(ctx, name, () => ({ ...next, metadata: { ...next.metadata, resourceVersion: rv } }), { allowCreate: false });
      return 'updated';
    } catch (err) {
      // another replica wrote first: look again
      if ((isAlreadyExists(err) || isConflict(err) || isNotFound(err)) && attempt < 10) continue;
      throw err;
    }
  }
}

export interface ReconcileResult {
  created: string[];
  updated: string[];
}

/** one complete pass over the default policy */
export async function reconcileDefaultPolicy(resolver: ResourceResolver, signal?: AbortSignal): Promise<ReconcileResult> {
  const lookup = (resource: string) => {
    const r = resolver.lookup(RBAC_GROUP, 'v1', resource);
    if (!r) throw new Error(`the registry serves no ${RBAC_GROUP}/v1 ${resource}`);
    return r;
  };
  const policy = defaultPolicy();
  const result: ReconcileResult = { created: [], updated: [] };
  const steps: Array<[RESTResource, KubeObject[], Kind, string]> = [
    [lookup('clusterroles'), policy.clusterRoles, 'role', 'clusterrole'],
    [lookup('clusterrolebindings'), policy.clusterRoleBindings, 'binding', 'clusterrolebinding'],
    [lookup('roles'), policy.roles, 'role', 'role'],
    [lookup('rolebindings'), policy.roleBindings, 'binding', 'rolebinding'],
  ];
  for (const [res, objects, kind, label] of steps) {
    for (const obj of objects) {
      const outcome = await reconcileOne(res, obj, kind, signal);
      const id = `${label}/${obj.metadata.namespace ? obj.metadata.namespace + '/' : ''}${obj.metadata.name}`;
      if (outcome === 'created') result.created.push(id);
      if (outcome === 'updated') result.updated.push(id);
    }
  }
  return result;
}

/** Runs the reconciliation until one pass succeeds; `done` resolves then. */
export function startPolicyReconciler(resolver: ResourceResolver, log: Logger, signal: AbortSignal): { done: Promise<void> } {
  const done = (async () => {
    let retryMs = 200;
    while (!signal.aborted) {
      try {
        const r = await reconcileDefaultPolicy(resolver, signal);
        if (r.created.length || r.updated.length)
          log.info('default RBAC policy reconciled', { created: r.created.length, updated: r.updated.length });
        return;
      } catch (err) {
        if (signal.aborted) return;
        log.v(1).info('reconciling the default RBAC policy failed, retrying', { err: (err as Error).message });
        await sleep(retryMs, signal);
        retryMs = Math.min(retryMs * 2, 5000);
      }
    }
  })();
  return { done };
}
