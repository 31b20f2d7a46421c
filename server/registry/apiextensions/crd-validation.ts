// The validation of a CustomResourceDefinition object (kube's apiextensions validation of a
// CRD): its name, group, scope and names, its versions (one storage version, structural schemas
// with affordable CEL rules, scale subresource paths, printer columns), conversion,
// storedVersions, the API-review annotation of protected groups and, on update, the immutable
// scope.

import type { KubeObject } from '../../../storage/interface.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../../machinery/validation/names.js';
import { asObject, isObject } from '../object.js';
import { celExpressionsOf, ruleCostErrors } from './cel-checks.js';
import { validateConversion } from './conversion-validation.js';
import type { CRDSpec, CRDStatus } from './definition.js';
import { validateStructural } from './structural-schema.js';

function dns1035(path: string, v: unknown, errs: FieldError[]): void {
  if (typeof v !== 'string') return;
  for (const m of isDNS1035Label(v)) errs.push(fieldErrors.invalid(path, v, m));
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
  if (names.kind && names.kind === names.listKind)
    errs.push(fieldErrors.invalid('spec.names.listKind', names.listKind, 'kind and listKind may not be the same'));
  (names.shortNames ?? []).forEach((s, i) => dns1035(`spec.names.shortNames[${i}]`, s, errs));
  (names.categories ?? []).forEach((s, i) => dns1035(`spec.names.categories[${i}]`, s, errs));
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0)
    errs.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  else {
    const storageCount = versions.filter((v) => v.storage).length;
    if (storageCount !== 1)
      errs.push(
        fieldErrors.invalid(
          'spec.versions',
          versions.map((v) => v.name),
          'must have exactly one version marked as storage version',
        ),
      );
    if (!versions.some((v) => v.served))
      errs.push(
        fieldErrors.invalid(
          'spec.versions',
          versions.map((v) => v.name),
          'must have at least one served version',
        ),
      );
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
        else if (!scale.specReplicasPath.startsWith('.spec.'))
          errs.push(
            fieldErrors.invalid(`${p}.subresources.scale.specReplicasPath`, scale.specReplicasPath, 'should be a json path under .spec'),
          );
        if (!scale.statusReplicasPath) errs.push(fieldErrors.required(`${p}.subresources.scale.statusReplicasPath`, ''));
        else if (!scale.statusReplicasPath.startsWith('.status.'))
          errs.push(
            fieldErrors.invalid(
              `${p}.subresources.scale.statusReplicasPath`,
              scale.statusReplicasPath,
              'should be a json path under .status',
            ),
          );
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
    errs.push(
      fieldErrors.invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  const status = (obj.status ?? {}) as CRDStatus;
  (status.storedVersions ?? []).forEach((sv, i) => {
    if (!versions.some((v) => v.name === sv))
      errs.push(fieldErrors.invalid(`status.storedVersions[${i}]`, sv, 'must appear in spec.versions'));
  });
  return errs;
}

const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

/** groups of the Kubernetes project need an API review, named by an annotation */
export function validateApproval(obj: KubeObject): FieldError[] {
  const group = String(asObject(obj.spec).group ?? '');
  const protectedGroup = ['k8s.io', 'kubernetes.io'].some((d) => group === d || group.endsWith(`.${d}`));
  if (!protectedGroup || obj.metadata.annotations?.[APPROVAL_ANNOTATION]) return [];
  return [
    fieldErrors.required(
      `metadata.annotations[${APPROVAL_ANNOTATION}]`,
      `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
    ),
  ];
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
