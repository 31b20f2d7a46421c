// Request options that fail validation are a 422 Invalid Status about the options kind in
// meta.k8s.io (CreateOptions, ListOptions, ...), as kube-apiserver answers: client-go's
// IsInvalid() depends on the reason and code, and each cause names the offending parameter.

import { StatusError } from '../machinery/status.js';
import { errorString, toCauses, type FieldError } from '../machinery/validation/field-error.js';

export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions' | 'ListOptions';

const META_GROUP = 'meta.k8s.io';

/** every error becomes a cause; the message lists each distinct one once, as Go's aggregate does */
export function invalidOptions(kind: OptionsKind, errs: readonly FieldError[]): StatusError {
  const distinct = [...new Set(errs.map(errorString))];
  const list = distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${kind}.${META_GROUP} "" is invalid: ${list}`, {
    group: META_GROUP,
    kind,
    causes: toCauses(errs),
  });
}

/** throws the 422 when there is anything to report */
export function throwIfInvalid(kind: OptionsKind, errs: readonly FieldError[]): void {
  if (errs.length > 0) throw invalidOptions(kind, errs);
}
