// The AdmissionReview a webhook gets and the checks its answer must pass (kube's
// CreateAdmissionObjects / VerifyAdmissionResponse).

import { randomUUID } from 'node:crypto';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { WebhookResultStatus } from '../errors.js';

export interface ReviewTarget {
  /** the resource and kind the webhook matched (differs from the request's under
   *  matchPolicy Equivalent) */
  group: string;
  version: string;
  resource: string;
  kind: string;
}

/** the version of AdmissionReview to speak: the first of the webhook's list kapi knows */
export function reviewVersion(versions: readonly string[] | undefined): 'v1' | 'v1beta1' | undefined {
  for (const v of versions ?? []) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

export function kindOf(attrs: AdmissionAttributes): { group: string; version: string; kind: string } {
  const ri = attrs.resource;
  const sub = attrs.subresource ? ri.subresources.find((s) => s.name === attrs.subresource) : undefined;
  if (sub) return { group: sub.kind.group, version: sub.kind.version, kind: sub.kind.kind };
  return { group: ri.group, version: ri.version, kind: ri.kind };
}

/** kube's AdmissionRequest (also what matchConditions see as `request`) */
export function admissionRequest(uid: string, attrs: AdmissionAttributes, target: ReviewTarget): Record<string, unknown> {
  const requestKind = kindOf(attrs);
  const u = attrs.user;
  const userInfo: Record<string, unknown> = { username: u.username };
  if (u.uid) userInfo.uid = u.uid;
  if (u.groups.length > 0) userInfo.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length > 0) userInfo.extra = u.extra;
  const req: Record<string, unknown> = {
    uid,
    kind: { group: target.group, version: target.version, kind: target.kind },
    resource: { group: target.group, version: target.version, resource: target.resource },
  };
  if (attrs.subresource) req.subResource = attrs.subresource;
  req.requestKind = requestKind;
  req.requestResource = { group: attrs.resource.group, version: attrs.resource.version, resource: attrs.resource.resource };
  if (attrs.subresource) req.requestSubResource = attrs.subresource;
  if (attrs.name) req.name = attrs.name;
  if (attrs.namespace) req.namespace = attrs.namespace;
  req.operation = attrs.operation;
  req.userInfo = userInfo;
  req.object = attrs.object;
  req.oldObject = attrs.oldObject;
  req.dryRun = attrs.dryRun;
  req.options = attrs.options ?? null;
  return req;
}

export function admissionReview(version: 'v1' | 'v1beta1', request: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request };
}

export function newReviewUid(): string {
  return randomUUID();
}

export interface VerifiedResponse {
  allowed: boolean;
  result?: WebhookResultStatus;
  /** decoded JSONPatch operations */
  patch?: unknown;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** throws an Error whose message kube would print after "received invalid webhook response: "
 *  (a PatchDecodeError or UnsupportedPatchType for what kube reports otherwise) */
export function verifyResponse(version: 'v1' | 'v1beta1', uid: string, body: unknown, mutating: boolean): VerifiedResponse {
  const review = (body ?? {}) as Record<string, unknown>;
  const resp = review.response as Record<string, unknown> | undefined | null;
  if (!resp || typeof resp !== 'object') throw new Error('webhook response was absent');
  const patch = typeof resp.patch === 'string' && resp.patch.length > 0 ? resp.patch : undefined;
  const patchType = resp.patchType;
  if (version === 'v1') {
    if (String(resp.uid ?? '') !== uid) throw new Error(`expected response.uid="${uid}", got "${String(resp.uid ?? '')}"`);
    const apiVersion = String(review.apiVersion ?? '');
    const kind = String(review.kind ?? '');
    if (apiVersion !== 'admission.k8s.io/v1' || kind !== 'AdmissionReview') {
      const slash = apiVersion.indexOf('/');
      const gv = slash < 0 ? `/${apiVersion}` : apiVersion;
      throw new Error(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gv}, Kind=${kind}`);
    }
    if (mutating) {
      if (patch && (patchType === undefined || patchType === null))
        throw new Error('webhook returned response.patch but not response.patchType');
      if (!patch && patchType !== undefined && patchType !== null)
        throw new Error('webhook returned response.patchType but not response.patch');
      if (patchType === '') throw new Error('webhook returned invalid response.patchType of ""');
    } else {
      if (patch) throw new Error('validating webhook may not return response.patch');
      if (patchType !== undefined && patchType !== null) throw new Error('validating webhook may not return response.patchType');
    }
  }
  const out: VerifiedResponse = {
    allowed: resp.allowed === true,
    warnings: Array.isArray(resp.warnings) ? resp.warnings.filter((w): w is string => typeof w === 'string') : [],
    auditAnnotations: {},
  };
  if (resp.status && typeof resp.status === 'object') out.result = resp.status as WebhookResultStatus;
  if (resp.auditAnnotations && typeof resp.auditAnnotations === 'object') {
    for (const [k, v] of Object.entries(resp.auditAnnotations as Record<string, unknown>))
      if (typeof v === 'string') out.auditAnnotations[k] = v;
  }
  if (mutating && patch) {
    // v1beta1 answers carry JSONPatch without saying so
    const type = version === 'v1' ? String(patchType) : 'JSONPatch';
    if (type !== 'JSONPatch') throw new UnsupportedPatchType(type);
    const text = Buffer.from(patch, 'base64').toString('utf8');
    try {
      out.patch = JSON.parse(text);
    } catch (err) {
      throw new PatchDecodeError((err as Error).message);
    }
  }
  return out;
}

export class UnsupportedPatchType extends Error {}
export class PatchDecodeError extends Error {}
