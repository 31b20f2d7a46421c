// The structural-schema checks of a CRD version's openAPIV3Schema (kube's
// apiextensions validation of JSONSchemaProps): types where kube needs them, items of arrays,
// list and map types, patterns that compile, defaults valid where they sit, metadata limited to
// name and generateName at the root, and each node's CEL rules.

import { errorBody, fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isObject } from '../object.js';
import { nodeRuleErrors } from './cel-checks.js';
import type { JSONSchemaProps } from './json-schema-props.js';
import { patternCompiles, validateValue } from './schema-validation.js';

const schemaTypes = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/** the structural-schema rules kube checks of a v1 CRD's schemas (the common ones), errors
 *  added to `errs`; `objPath`: where the node's values sit in an object (undefined below
 *  additionalProperties and items), for the check of defaults; `uncorrelatable`: see
 *  nodeRuleErrors; `stored`: the CEL expressions of the CRD before an update */
export function validateStructural(
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
  if (!s.type && !intOrString && !preserve)
    errs.push(fieldErrors.required(`${path}.type`, 'must not be empty for specified object fields'));
  if (s.type && !schemaTypes.has(s.type))
    errs.push(fieldErrors.notSupported(`${path}.type`, s.type, ['array', 'boolean', 'integer', 'number', 'object', 'string']));
  if (root && s.type && s.type !== 'object') errs.push(fieldErrors.invalid(`${path}.type`, s.type, 'must be object at the root'));
  if (s.type === 'array' && !s.items) errs.push(fieldErrors.required(`${path}.items`, 'must be specified'));
  if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false) {
    errs.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  errs.push(...nodeRuleErrors(s, path, root, uncorrelatable, stored));
  if (s.pattern !== undefined && !patternCompiles(s.pattern))
    errs.push(fieldErrors.invalid(`${path}.pattern`, s.pattern, 'must be a valid regular expression'));
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (!['atomic', 'set', 'map'].includes(listType))
      errs.push(fieldErrors.notSupported(`${path}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
    if (s.type !== 'array')
      errs.push(fieldErrors.invalid(`${path}.type`, s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
    if (listType === 'map') {
      if (!s['x-kubernetes-list-map-keys']?.length)
        errs.push(fieldErrors.required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
      if (s.items && s.items.type !== 'object')
        errs.push(
          fieldErrors.invalid(`${path}.items.type`, s.items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"),
        );
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
  for (const [name, p] of Object.entries(s.properties ?? {}))
    validateStructural(p, `${path}.properties[${name}]`, false, errs, childObj(name), propsUncorrelatable, stored);
  if (isObject(s.additionalProperties))
    validateStructural(
      s.additionalProperties as JSONSchemaProps,
      `${path}.additionalProperties`,
      false,
      errs,
      undefined,
      uncorrelatable,
      stored,
    );
  const itemsUncorrelatable = uncorrelatable ?? (s['x-kubernetes-list-type'] === 'map' ? undefined : path);
  if (s.items) validateStructural(s.items, `${path}.items`, false, errs, undefined, itemsUncorrelatable, stored);
  if (root && s.properties?.metadata) {
    const m = s.properties.metadata;
    const extra = Object.keys(m).filter((k) => k !== 'type' && k !== 'properties' && k !== 'description');
    if (extra.length > 0 || Object.keys(m.properties ?? {}).some((k) => k !== 'name' && k !== 'generateName')) {
      errs.push(
        fieldErrors.forbidden(
          `${path}.properties[metadata]`,
          'must not specify anything other than name and generateName, but metadata is implicitly specified',
        ),
      );
    }
  }
}
