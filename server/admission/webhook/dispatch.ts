// Which webhooks a request goes to, and one call: rules (with matchPolicy Equivalent across
// the versions kapi serves), namespaceSelector, objectSelector, matchConditions, the dry-run
// check, the call itself and its answer.

import type { KubeObject } from '../../../storage/interface.js';
import type { AdmissionAttributes, ResourceResolver } from '../../registry/rest.js';
import { internalContext } from '../../controllers/util.js';
import { labelSelectorFromObject, type LabelSelectorObject } from '../../selectors/labels.js';
import { errors, StatusError } from '../../machinery/status.js';
import { dryRunUnsupported, webhookDenied, WebhookCallError } from '../errors.js';
import { ruleMatches, targetOf } from './rules.js';
import { evaluateMatchConditions } from './match-conditions.js';
import { AuthorizerSession } from '../../cel/authorizer-library.js';
import {
  admissionRequest,
  admissionReview,
  kindOf,
  newReviewUid,
  reviewVersion,
  verifyResponse,
  PatchDecodeError,
  UnsupportedPatchType,
  type ReviewTarget,
  type VerifiedResponse,
} from './review.js';
import { postReview, resolveTarget } from './client.js';
import { anonymous, type CredentialResolver } from './credentials.js';
import type { WebhookEntry } from './types.js';
import { convertObject, gvkString } from '../../registry/conversion/index.js';

export const DEFAULT_TIMEOUT_SECONDS = 10;
export const MAX_TIMEOUT_SECONDS = 30;

function labelsOf(obj: KubeObject | null | undefined): Record<string, string> | undefined {
  return obj?.metadata?.labels as Record<string, string> | undefined;
}

function selectorMatches(sel: LabelSelectorObject | undefined, labels: Record<string, string> | undefined): boolean {
  // an absent selector is defaulted to {} (everything) by the API
  if (!sel) return true;
  return labelSelectorFromObject(sel).matches(labels ?? {});
}

function isEmptySelector(sel: LabelSelectorObject | undefined): boolean {
  return !sel || (Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0);
}

/** the resource the webhook is called for; undefined when no rule covers the request */
export function matchingTarget(entry: WebhookEntry, attrs: AdmissionAttributes, resolver: ResourceResolver): ReviewTarget | undefined {
  const rules = entry.spec.rules ?? [];
  const t = targetOf(attrs);
  const k = kindOf(attrs);
  if (rules.some((r) => ruleMatches(r, t))) {
    return { group: t.group, version: t.version, resource: t.resource, kind: k.kind };
  }
  if ((entry.spec.matchPolicy ?? 'Equivalent') !== 'Equivalent') return undefined;
  // the same resource served at another version of its group
  for (const rest of resolver.all()) {
    const info = rest.info;
    if (rest.subresource !== undefined) continue;
    if (info.group !== t.group || info.resource !== t.resource || info.version === t.version) continue;
    const alt = { ...t, version: info.version };
    if (rules.some((r) => ruleMatches(r, alt))) {
      const sub = attrs.subresource ? info.subresources.find((s) => s.name === attrs.subresource) : undefined;
      return { group: info.group, version: info.version, resource: info.resource, kind: sub ? sub.kind.kind : info.kind };
    }
  }
  return undefined;
}

/** the namespace's labels, read once per request (`memo`): from the watch cache first, from
 *  etcd when the cache does not have it yet (it may just have been created elsewhere) */
async function namespaceLabels(
  attrs: AdmissionAttributes,
  resolver: ResourceResolver,
  memo: Map<string, Promise<Record<string, string> | undefined>>,
  signal?: AbortSignal,
): Promise<Record<string, string> | undefined> {
  if (attrs.resource.group === '' && attrs.resource.resource === 'namespaces' && !attrs.subresource) {
    return labelsOf(attrs.object ?? attrs.oldObject);
  }
  const ns = attrs.resource.resource === 'namespaces' ? attrs.name : attrs.namespace;
  let p = memo.get(ns);
  if (!p) {
    p = (async () => {
      const rest = resolver.lookup('', 'v1', 'namespaces');
      if (!rest) return undefined;
      const ctx = internalContext('kube-apiserver', '', signal);
      try {
        return labelsOf(await rest.get(ctx, ns, { resourceVersion: '0' }));
      } catch (err) {
        if (!(err instanceof StatusError) || err.code !== 404) throw err;
        return labelsOf(await rest.get(ctx, ns, {}));
      }
    })();
    memo.set(ns, p);
  }
  return p;
}

/** the attributes as the webhook sees them: objects converted to the version it matched
 *  (matchPolicy Equivalent); the same attributes when that is the request's version */
export function forTarget(attrs: AdmissionAttributes, target: ReviewTarget): AdmissionAttributes {
  const from = kindOf(attrs);
  const to = { group: target.group, version: target.version, kind: target.kind };
  if (gvkString(from) === gvkString(to)) return attrs;
  return {
    ...attrs,
    object: attrs.object ? convertObject(attrs.object, from, to) : null,
    oldObject: attrs.oldObject ? convertObject(attrs.oldObject, from, to) : null,
  };
}

/** back from the webhook's version to the request's */
export function fromTarget(obj: KubeObject, attrs: AdmissionAttributes, target: ReviewTarget): KubeObject {
  const to = kindOf(attrs);
  const from = { group: target.group, version: target.version, kind: target.kind };
  if (gvkString(from) === gvkString(to)) return obj;
  return convertObject(obj, from, to, true);
}

export interface Invocation {
  entry: WebhookEntry;
  target: ReviewTarget;
}

/** undefined: not called. Throws a StatusError when the request must fail (namespace lookup
 *  failures, matchConditions errors under Fail). */
export async function shouldCall(
  entry: WebhookEntry,
  attrs: AdmissionAttributes,
  resolver: ResourceResolver,
  signal?: AbortSignal,
  memo: Map<string, Promise<Record<string, string> | undefined>> = new Map(),
  session: AuthorizerSession = new AuthorizerSession(undefined),
): Promise<Invocation | undefined> {
  const target = matchingTarget(entry, attrs, resolver);
  if (!target) return undefined;
  const spec = entry.spec;
  const clusterScoped = attrs.namespace === '' && attrs.resource.resource !== 'namespaces';
  if (!clusterScoped && !isEmptySelector(spec.namespaceSelector)) {
    let labels: Record<string, string> | undefined;
    try {
      labels = await namespaceLabels(attrs, resolver, memo, signal);
    } catch (err) {
      if (err instanceof StatusError) throw err;
      throw errors.internal((err as Error).message);
    }
    if (!selectorMatches(spec.namespaceSelector, labels)) return undefined;
  }
  if (!isEmptySelector(spec.objectSelector)) {
    const sel = spec.objectSelector;
    const newMatch = attrs.object ? selectorMatches(sel, labelsOf(attrs.object)) : false;
    const oldMatch = attrs.oldObject ? selectorMatches(sel, labelsOf(attrs.oldObject)) : false;
    if (!newMatch && !oldMatch) return undefined;
  }
  const conditions = spec.matchConditions ?? [];
  if (conditions.length > 0) {
    const seen = forTarget(attrs, target);
    const r = await evaluateMatchConditions(conditions, {
      object: seen.object,
      oldObject: seen.oldObject,
      request: admissionRequest('', seen, target),
      session,
      user: attrs.user,
      requestResource: {
        group: target.group,
        resource: target.resource,
        subresource: attrs.subresource ?? '',
        namespace: attrs.namespace,
        name: attrs.name,
      },
    });
    if ('error' in r) {
      if ((spec.failurePolicy ?? 'Fail') === 'Ignore') return undefined;
      throw errors.forbidden({ group: attrs.resource.group, resource: attrs.resource.resource, name: attrs.name }, r.error);
    }
    if (!r.matches) return undefined;
  }
  return { entry, target };
}

export function timeoutMsOf(entry: WebhookEntry): number {
  const s = entry.spec.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  return Math.min(Math.max(s, 1), MAX_TIMEOUT_SECONDS) * 1000;
}

/**
 * Calls one webhook with `attrs` as it is to see them (see forTarget). Returns its verified answer when it allowed the request; throws a
 * StatusError for a denial or a refused dry run, a WebhookCallError when it could not be
 * called or answered nonsense (the caller applies the failure policy).
 */
export async function callWebhook(
  inv: Invocation,
  attrs: AdmissionAttributes,
  resolver: ResourceResolver,
  mutating: boolean,
  signal?: AbortSignal,
  credentialsFor: CredentialResolver = anonymous,
): Promise<VerifiedResponse> {
  const spec = inv.entry.spec;
  const name = spec.name;
  if (attrs.dryRun) {
    if (!spec.sideEffects) throw new WebhookCallError(name, 'Webhook SideEffects is nil');
    if (spec.sideEffects !== 'None' && spec.sideEffects !== 'NoneOnDryRun') throw dryRunUnsupported(name);
  }
  const version = reviewVersion(spec.admissionReviewVersions);
  if (!version)
    throw new WebhookCallError(
      name,
      'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)',
    );
  const uid = newReviewUid();
  const review = admissionReview(version, admissionRequest(uid, attrs, inv.target));
  const target = await resolveTarget(name, spec.clientConfig, resolver, credentialsFor);
  const body = await postReview(name, target, review, timeoutMsOf(inv.entry), signal);
  let verified: VerifiedResponse;
  try {
    verified = verifyResponse(version, uid, body, mutating);
  } catch (err) {
    if (err instanceof PatchDecodeError) throw new WebhookCallError(name, `received undecodable patch in webhook response: ${err.message}`);
    if (err instanceof UnsupportedPatchType) throw new WebhookCallError(name, `unsupported patch type "${err.message}"`);
    throw new WebhookCallError(name, `received invalid webhook response: ${(err as Error).message}`);
  }
  if (!verified.allowed) {
    // the warnings of a denial still reach the client
    throw Object.assign(webhookDenied(name, verified.result), { webhookWarnings: verified.warnings });
  }
  return verified;
}
