// The strategy of CustomResourceDefinition objects: kube's defaults (listKind, singular,
// conversion None), storedVersions kept up to date with the storage version, and the
// validation in crd-validation.ts.

import type { KubeObject } from '../../../storage/interface.js';
import { nameIsDNSSubdomain } from '../../machinery/validation/names.js';
import { asObject, isObject } from '../object.js';
import { defineStrategy, keepOldStatus, type ResourceStrategy } from '../strategy.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/object-meta.js';
import { validateApproval, validateCRD, validateCRDUpdate } from './crd-validation.js';
import type { CRDSpec, CRDStatus } from './definition.js';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

function defaultCRD(obj: KubeObject): void {
  const spec = asObject(obj.spec);
  if (!isObject(spec.names)) return;
  const names = spec.names as Record<string, unknown>;
  if (typeof names.kind === 'string' && names.kind) {
    if (!names.listKind) names.listKind = `${names.kind}List`;
    if (!names.singular) names.singular = names.kind.toLowerCase();
  }
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  else if (!(spec.conversion as Record<string, unknown>).strategy) (spec.conversion as Record<string, unknown>).strategy = 'None';
  // a conversion webhook's service port defaults to 443 (v1 defaults)
  const service = asObject(asObject(asObject(spec.conversion).webhook).clientConfig).service;
  if (isObject(service) && service.port === undefined) service.port = 443;
}

function addStoredVersion(obj: KubeObject): void {
  const spec = obj.spec as unknown as CRDSpec | undefined;
  const storage = spec?.versions?.find?.((v) => v.storage)?.name;
  if (!storage) return;
  const status = (obj.status ??= {}) as CRDStatus;
  status.storedVersions ??= [];
  if (!status.storedVersions.includes(storage)) status.storedVersions.push(storage);
}

export function crdStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    tracksGeneration: true,
    applyDefaults: defaultCRD,
    prepareForCreate(obj) {
      obj.status = {};
      addStoredVersion(obj);
    },
    prepareForUpdate(obj, old) {
      keepOldStatus(obj, old);
      addStoredVersion(obj);
    },
    validate: (obj) => [...validateObjectMeta(obj.metadata, false, nameIsDNSSubdomain), ...validateCRD(obj), ...validateApproval(obj)],
    validateUpdate: (obj, old) => [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateCRDUpdate(obj, old)],
  });
}
