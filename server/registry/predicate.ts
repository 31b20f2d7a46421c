// Turns a request's label and field selectors into the storage SelectionPredicate, after
// checking the field labels against what the requested kind supports.

import type { KubeObject, SelectionPredicate } from '../../storage/interface.js';
import { errors } from '../machinery/status.js';
import { type FieldSelector, parseFieldSelectorOrBadRequest, type FieldSet } from '../selectors/fields.js';
import type { FieldLabelConverter } from '../selectors/field-sets.js';
import { type LabelSelector, parseLabelSelectorOrBadRequest, SelectorError } from '../selectors/labels.js';

export interface Selection {
  labels: LabelSelector;
  fields: FieldSelector;
  predicate: SelectionPredicate;
}

/** Parses both selectors (400 on error) and builds the predicate over stored objects. */
export function buildSelection(
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
  convertLabel: FieldLabelConverter,
  fieldsOf: (obj: KubeObject) => FieldSet,
): Selection {
  const labels = parseLabelSelectorOrBadRequest(labelSelector);
  let fields = parseFieldSelectorOrBadRequest(fieldSelector);
  try {
    fields = fields.transform(convertLabel);
  } catch (e) {
    if (e instanceof SelectorError) throw errors.badRequest(e.message);
    throw e;
  }
  const isEverything = labels.empty() && fields.empty();
  const predicate: SelectionPredicate = isEverything
    ? { isEverything: true, matches: () => true }
    : {
        isEverything: false,
        matches: (obj) => labels.matches(obj.metadata?.labels) && (fields.empty() || fields.matches(fieldsOf(obj))),
      };
  return { labels, fields, predicate };
}
