// The strategy of CustomResourceDefinition objects: kube's defaults (listKind, singular,
// conversion None), validation of names, versions and structural schemas, immutable scope,
// storedVersions kept up to date with the storage version.

import type { KubeObject } from '../../../storage/interface.js';
import { asObject, isObject } from '../object.js';
import { defineStrategy, keepOldStatus, statusStrategy, type ResourceStrategy } from '../strategy.js';
import { errorBody, fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../../machinery/validation/names.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/object-meta.js';
import { nameIsDNSSubdomain } from '../../machinery/validation/names.js';
import type { CRDSpec, CRDStatus } from './definition.js';
import { celExpressionsOf, nodeRuleErrors, ruleCostErrors } from './cel-checks.js';
import { validateConversion } from './conversion-validation.js';
import { patternCompiles, validateValue, type JSONSchemaProps } from './schema-validation.js';

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

function dns1035(path: string, v: unknown, errs: FieldError[]): void {
  if (typeof v !== 'string') return;
  for (const m of isDNS1035Label(v)) errs.push(fieldErrors.invalid(path, v, m));
}

const schemaTypes = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/** the structural-schema rules kube checks of a v1 CRD's schemas (the common ones) */
/** `uncorrelatable`: see nodeRuleErrors; `stored`: the CEL expressions of the CRD before an update */
function validateStructural(
  s: JSONSchemaProps,
  path: string,
  root: boolean,
  errs: FieldError[],
  objPath: string | undefined = '',
  uncorrelatable: string | undefined = undefined,
  stored: ReadonlySet<string> = new Set(),
): void {
  if (typeof s !== 'object' || s === null) return;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (!s.type && !intOrString && !preserve) errs.push(fieldErrors.required(`${path}.type`, 'must not be empty for specified object fields'));
  if (s.type && !schemaTypes.has(s.type)) errs.push(fieldErrors.notSupported(`${path}.type`, s.type, ['array', 'boolean', 'integer', 'number', 'object', 'string']));
  if (root && s.type && s.type !== 'object') errs.push(fieldErrors.invalid(`${path}.type`, s.type, 'must be object at the root'));
  if (s.type === 'array' && !s.items) errs.push(fieldErrors.required(`${path}.items`, 'must be specified'));
  if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false) {
    errs.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  errs.push(...nodeRuleErrors(s, path, root, uncorrelatable, stored));
  if (s.pattern !== undefined && !patternCompiles(s.pattern)) errs.push(fieldErrors.invalid(`${path}.pattern`, s.pattern, 'must be a valid regular expression'));
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (!['atomic', 'set', 'map'].includes(listType)) errs.push(fieldErrors.notSupported(`${path}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
    if (s.type !== 'array') errs.push(fieldErrors.invalid(`${path}.type`, s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
    if (listType === 'map') {
      if (!s['x-kubernetes-list-map-keys']?.length) errs.push(fieldErrors.required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
      if (s.items && s.items.type !== 'object') errs.push(fieldErrors.invalid(`${path}.items.type`, s.items.type ?? '', 'must be object if parent array\'s x-kubernetes-list-type is map'));
    }
  } else if (s['x-kubernetes-list-map-keys'] !== undefined) {
    errs.push(fieldErrors.forbidden(`${path}.x-kubernetes-list-map-keys`, 'must not be specified if x-kubernetes-list-type is not map'));
  }
  // a default must itself be valid where it is used
  if (s.default !== undefined && objPath !== undefined) {
    const { default: _d, ...withoutDefault } = s;
    for (const e of validateValue(s.default, withoutDefault, objPath)) {
      errs.push(fieldErrors.invalid(`${path}.default`, { rendered: errorBody(e).replace(/^[^:]*: /, '') }, ''));
    }
  }
  const childObj = (name: string) => (objPath === undefined ? undefined : objPath ? `${objPath}.${name}` : name);
  // old and new values correlate through properties (unless the map is atomic), map values
  // and map-list items by key; not through atomic lists or sets
  const propsUncorrelatable = uncorrelatable ?? (s['x-kubernetes-map-type'] === 'atomic' ? path : undefined);
  for (const [name, p] of Object.entries(s.properties ?? {})) validateStructural(p, `${path}.properties[${name}]`, false, errs, childObj(name), propsUncorrelatable, stored);
  if (isObject(s.additionalProperties)) validateStructural(s.additionalProperties as JSONSchemaProps, `${path}.additionalProperties`, false, errs, undefined, uncorrelatable, stored);
  const itemsUncorrelatable = uncorrelatable ?? (s['x-kubernetes-list-type'] === 'map' ? undefined : path);
  if (s.items) validateStructural(s.items, `${path}.items`, false, errs, undefined, itemsUncorrelatable, stored);
  if (root && s.properties?.metadata) {
    const m = s.properties.metadata;
    const extra = Object.keys(m).filter((k) => k !== 'type' && k !== 'properties' && k !== 'description');
    if (extra.length > 0 || Object.keys(m.properties ?? {}).some((k) => k !== 'name' && k !== 'generateName')) {
      errs.push(fieldErrors.forbidden(`${path}.properties[metadata]`, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
}

/** `stored`: on an update, the CEL expressions the CRD already has (compiled with the stored-
 *  expression libraries) */
export function validateCRD(obj: KubeObject, stored: ReadonlySet<string> = new Set()): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObject(obj.spec) as unknown as Partial<CRDSpec>;
  const group = typeof spec.group === 'string' ? spec.group : '';
  const names = (isObject(spec.names) ? spec.names : {}) as Partial<CRDSpec['names']>;
  const name = obj.metadata.name ?? '';
  if (names.plural && group && name !== `${names.plural}.${group}`) {
    errs.push(fieldErrors.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (!group) errs.push(fieldErrors.required('spec.group', ''));
  else {
    for (const m of isDNS1123Subdomain(group)) errs.push(fieldErrors.invalid('spec.group', group, m));
    if (group.split('.').length < 2) errs.push(fieldErrors.invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    if (!spec.scope) errs.push(fieldErrors.required('spec.scope', ''));
    else errs.push(fieldErrors.notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  }
  if (!names.plural) errs.push(fieldErrors.required('spec.names.plural', ''));
  else dns1035('spec.names.plural', names.plural, errs);
  if (names.singular) dns1035('spec.names.singular', names.singular, errs);
  if (!names.kind) errs.push(fieldErrors.required('spec.names.kind', ''));
  if (!names.listKind) errs.push(fieldErrors.required('spec.names.listKind', ''));
  if (names.kind && names.kind === names.listKind) errs.push(fieldErrors.invalid('spec.names.listKind', names.listKind, 'kind and listKind may not be the same'));
  (names.shortNames ?? []).forEach((s, i) => dns1035(`spec.names.shortNames[${i}]`, s, errs));
  (names.categories ?? []).forEach((s, i) => dns1035(`spec.names.categories[${i}]`, s, errs));
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0) errs.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  else {
    const storageCount = versions.filter((v) => v.storage).length;
    if (storageCount !== 1) errs.push(fieldErrors.invalid('spec.versions', versions.map((v) => v.name), 'must have exactly one version marked as storage version'));
    if (!versions.some((v) => v.served)) errs.push(fieldErrors.invalid('spec.versions', versions.map((v) => v.name), 'must have at least one served version'));
    const seen = new Set<string>();
    versions.forEach((v, i) => {
      const p = `spec.versions[${i}]`;
      if (!v.name) errs.push(fieldErrors.required(`${p}.name`, ''));
      else {
        dns1035(`${p}.name`, v.name, errs);
        if (seen.has(v.name)) errs.push(fieldErrors.duplicate(`${p}.name`, v.name));
        seen.add(v.name);
      }
      const schema = v.schema?.openAPIV3Schema;
      if (!schema) errs.push(fieldErrors.required(`${p}.schema.openAPIV3Schema`, 'schemas are required'));
      else {
        const before = errs.length;
        validateStructural(schema, `${p}.schema.openAPIV3Schema`, true, errs, '', undefined, stored);
        // costs are estimated once the rules compile
        if (errs.length === before) errs.push(...ruleCostErrors(schema, `${p}.schema.openAPIV3Schema`, stored));
      }
      const scale = v.subresources?.scale;
      if (scale) {
        if (!scale.specReplicasPath) errs.push(fieldErrors.required(`${p}.subresources.scale.specReplicasPath`, ''));
        else if (!scale.specReplicasPath.startsWith('.spec.')) errs.push(fieldErrors.invalid(`${p}.subresources.scale.specReplicasPath`, scale.specReplicasPath, 'should be a json path under .spec'));
        if (!scale.statusReplicasPath) errs.push(fieldErrors.required(`${p}.subresources.scale.statusReplicasPath`, ''));
        else if (!scale.statusReplicasPath.startsWith('.status.')) errs.push(fieldErrors.invalid(`${p}.subresources.scale.statusReplicasPath`, scale.statusReplicasPath, 'should be a json path under .status'));
      }
      (v.additionalPrinterColumns ?? []).forEach((c, j) => {
        const cp = `${p}.additionalPrinterColumns[${j}]`;
        if (!c.name) errs.push(fieldErrors.required(`${cp}.name`, ''));
        if (!c.jsonPath) errs.push(fieldErrors.required(`${cp}.jsonPath`, ''));
        const types = ['array', 'boolean', 'date', 'integer', 'number', 'object', 'string'];
        if (!types.includes(c.type)) errs.push(fieldErrors.notSupported(`${cp}.type`, c.type, types));
      });
    });
  }
  errs.push(...validateConversion(spec.conversion));
  if (spec.preserveUnknownFields === true) {
    errs.push(fieldErrors.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  const status = (obj.status ?? {}) as CRDStatus;
  (status.storedVersions ?? []).forEach((sv, i) => {
    if (!versions.some((v) => v.name === sv)) errs.push(fieldErrors.invalid(`status.storedVersions[${i}]`, sv, 'must appear in spec.versions'));
  });
  return errs;
}

const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

/** groups of the Kubernetes project need an API review, named by an annotation */
function validateApproval(obj: KubeObject): FieldError[] {
  const group = String(asObject(obj.spec).group ?? '');
  const protectedGroup = ['k8s.io', 'kubernetes.io'].some((d) => group === d || group.endsWith(`.${d}`));
  if (!protectedGroup || obj.metadata.annotations?.[APPROVAL_ANNOTATION]) return [];
  return [fieldErrors.required(`metadata.annotations[${APPROVAL_ANNOTATION}]`, `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`)];
}

export function validateCRDUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const oldVersions = (asObject(old.spec) as unknown as Partial<CRDSpec>).versions;
  const stored = celExpressionsOf(Array.isArray(oldVersions) ? oldVersions.map((v) => v.schema?.openAPIV3Schema) : []);
  const errs = validateCRD(obj, stored);
  const scope = asObject(obj.spec).scope;
  const oldScope = asObject(old.spec).scope;
  if (scope !== oldScope) errs.push(fieldErrors.invalid('spec.scope', scope as string, 'field is immutable'));
  return errs;
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

export function crdStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  return statusStrategy(base);
}
