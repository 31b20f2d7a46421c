// CertificateSigningRequests: the requester's identity is recorded from the request (never
// taken from the body), a new request starts without conditions, `/approval` changes only
// the Approved/Denied conditions and `/status` only the rest of the status.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, clone, ensureObject, isObject, rfc3339, type JsonObject } from '../object.js';
import { defineStrategy, type ResourceStrategy, type StrategyContext } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { nameIsPathSegment } from '../../machinery/validation/names.js';
import { validateObjectMetaUpdate } from '../validation/object-meta.js';

const specOrder = ['request', 'signerName', 'expirationSeconds', 'usages', 'username', 'uid', 'groups', 'extra'];

function fillRequester(obj: KubeObject, c: StrategyContext): void {
  const spec = ensureObject(obj, 'spec');
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  const u = c.request.user;
  spec.username = u.username;
  if (u.uid) spec.uid = u.uid;
  if (u.groups.length) spec.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length) spec.extra = clone(u.extra);
  const ordered: JsonObject = {};
  for (const k of specOrder) if (spec[k] !== undefined) ordered[k] = spec[k];
  for (const [k, v] of Object.entries(spec)) if (!(k in ordered)) ordered[k] = v;
  obj.spec = ordered;
}

function validateCSR(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObject(obj.spec);
  const pem = typeof spec.request === 'string' ? Buffer.from(spec.request, 'base64').toString('latin1') : '';
  if (!pem.includes('-----BEGIN CERTIFICATE REQUEST-----')) {
    errs.push(
      fieldErrors.invalid('spec.request', { rendered: pem ? '[]byte{...}' : '[]byte(nil)' }, 'PEM block type must be CERTIFICATE REQUEST'),
    );
  }
  if (typeof spec.signerName !== 'string' || !spec.signerName) errs.push(fieldErrors.required('spec.signerName'));
  else if (spec.signerName === 'kubernetes.io/legacy-unknown') {
    errs.push(fieldErrors.invalid('spec.signerName', spec.signerName, 'the legacy signerName is not allowed via this API version'));
  }
  if (asArray(spec.usages).length === 0) errs.push(fieldErrors.required('spec.usages'));
  return errs;
}

const approvalTypes = new Set(['Approved', 'Denied']);

/** conditions get their default status and timestamps (kept from the old ones when unchanged) */
function stampConditions(conditions: unknown[], old: unknown[], now: Date): JsonObject[] {
  const before = old.filter(isObject);
  return conditions.filter(isObject).map((c) => {
    const cond = { ...c };
    if (!cond.status) cond.status = 'True';
    const prev = before.find((o) => o.type === cond.type);
    if (!cond.lastUpdateTime) cond.lastUpdateTime = prev?.lastUpdateTime ?? rfc3339(now);
    if (!cond.lastTransitionTime) {
      cond.lastTransitionTime = prev && prev.status === cond.status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(now);
    }
    return cond;
  });
}

function validateApprovalConditions(conditions: JsonObject[]): FieldError[] {
  const errs: FieldError[] = [];
  const approved = conditions.some((c) => c.type === 'Approved' && c.status === 'True');
  const denied = conditions.some((c) => c.type === 'Denied' && c.status === 'True');
  if (approved && denied)
    errs.push(fieldErrors.invalid('status.conditions', 'Approved', 'Approved and Denied conditions are mutually exclusive'));
  return errs;
}

export function csrStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    validateName: nameIsPathSegment,
    hasStatusSubresource: true,
    initialStatus: () => ({}),
    prepareCreate: (obj, c) => fillRequester(obj, c),
    prepareUpdate(obj, old) {
      // the requester and the request itself never change
      obj.spec = clone(old.spec);
    },
    validateSpec: (obj) => validateCSR(obj),
  });
}

/** `certificatesigningrequests/approval`: only the Approved/Denied conditions change */
export function csrApprovalStrategy(base: ResourceStrategy): ResourceStrategy {
  return {
    ...base,
    allowCreateOnUpdate: false,
    prepareForUpdate(obj, old, c) {
      const newConditions = asArray(asObject(obj.status).conditions);
      const kept = asArray(asObject(old.status).conditions).filter((x) => !approvalTypes.has(String(asObject(x).type)));
      const approvals = newConditions.filter((x) => approvalTypes.has(String(asObject(x).type)));
      obj.spec = clone(old.spec);
      const status = clone(asObject(old.status));
      const all = stampConditions([...kept, ...approvals], asArray(asObject(old.status).conditions), c.now);
      if (all.length) status.conditions = all;
      else delete status.conditions;
      obj.status = status;
    },
    generationChanged: () => false,
    validateUpdate: (obj, old) => [
      ...validateObjectMetaUpdate(obj.metadata, old.metadata),
      ...validateApprovalConditions(asArray(asObject(obj.status).conditions).filter(isObject)),
    ],
  };
}

/** `certificatesigningrequests/status`: the signer's part; approvals stay as they are */
export function csrStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  return {
    ...base,
    allowCreateOnUpdate: false,
    prepareForUpdate(obj, old, c) {
      obj.spec = clone(old.spec);
      const status = clone(asObject(obj.status));
      const oldConditions = asArray(asObject(old.status).conditions);
      const approvals = oldConditions.filter((x) => approvalTypes.has(String(asObject(x).type)));
      const others = asArray(status.conditions).filter((x) => !approvalTypes.has(String(asObject(x).type)));
      const all = stampConditions([...approvals, ...others], oldConditions, c.now);
      if (all.length) status.conditions = all;
      else delete status.conditions;
      obj.status = status;
    },
    generationChanged: () => false,
    validateUpdate: (obj, old) => validateObjectMetaUpdate(obj.metadata, old.metadata),
  };
}
