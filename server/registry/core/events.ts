// Events (core/v1, and events.k8s.io/v1 on the same storage): kube's legacy checks for every
// Event (the namespace of the involved object; for new-style events with an eventTime, the
// reporting controller, instance, action and reason and their lengths) and, for events.k8s.io,
// the strict rules (eventTime required, type Normal/Warning, deprecated fields unset, series).
// Paths use the core field names, as kube-apiserver reports them for both APIs.

import type { KubeObject } from '../../../storage/interface.js';
import { asObject, isObject } from '../object.js';
import { defineStrategy, type ResourceStrategy, type StrategyContext } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1123Subdomain } from '../../machinery/validation/names.js';
import { validateObjectMeta } from '../validation/object-meta.js';
import { nameIsDNSSubdomain } from '../../machinery/validation/names.js';
import { num, qualifiedName, str } from '../validation/values.js';

const reportingInstanceLengthLimit = 128;
const actionLengthLimit = 128;
const reasonLengthLimit = 128;
const noteLengthLimit = 1024;

const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';

function legacyValidateEvent(obj: KubeObject, coreRequest: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = obj.metadata.namespace ?? '';
  const involvedNs = str(asObject(obj.involvedObject).namespace);
  const controllerField = coreRequest ? 'reportingComponent' : 'reportingController';
  if (!isSet(obj.eventTime)) {
    if (!involvedNs) {
      if (namespace !== '' && namespace !== 'default')
        errs.push(fieldErrors.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    } else if (namespace !== involvedNs) {
      errs.push(fieldErrors.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    }
  } else {
    if (!involvedNs && namespace !== 'default' && namespace !== 'kube-system') {
      errs.push(fieldErrors.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    }
    const controller = str(obj.reportingComponent);
    if (!controller) errs.push(fieldErrors.required(controllerField));
    errs.push(...qualifiedName(controller, controllerField));
    const instance = str(obj.reportingInstance);
    if (!instance) errs.push(fieldErrors.required('reportingInstance'));
    if (instance.length > reportingInstanceLengthLimit)
      errs.push(fieldErrors.invalid('reportingInstance', '', `can have at most ${reportingInstanceLengthLimit} characters`));
    const action = str(obj.action);
    if (!action) errs.push(fieldErrors.required('action'));
    if (action.length > actionLengthLimit) errs.push(fieldErrors.invalid('action', '', `can have at most ${actionLengthLimit} characters`));
    const reason = str(obj.reason);
    if (!reason) errs.push(fieldErrors.required('reason'));
    if (reason.length > reasonLengthLimit) errs.push(fieldErrors.invalid('reason', '', `can have at most ${reasonLengthLimit} characters`));
    if (str(obj.message).length > noteLengthLimit)
      errs.push(fieldErrors.invalid('message', '', `can have at most ${noteLengthLimit} characters`));
  }
  for (const m of isDNS1123Subdomain(namespace)) errs.push(fieldErrors.invalid('namespace', namespace, m));
  return errs;
}

function validateSeries(obj: KubeObject): FieldError[] {
  if (!isObject(obj.series)) return [];
  const errs: FieldError[] = [];
  const count = num(obj.series.count);
  if (count < 2) errs.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
  if (!isSet(obj.series.lastObservedTime)) errs.push(fieldErrors.required('series.lastObservedTime'));
  return errs;
}

export function validateEvent(obj: KubeObject, c: StrategyContext): FieldError[] {
  const coreRequest = c.info.group === '' && c.info.version === 'v1';
  const errs = legacyValidateEvent(obj, coreRequest);
  // core/v1 (and events.k8s.io/v1beta1) skip the strict rules for compatibility
  if (c.info.group === '' || c.info.version === 'v1beta1') return errs;
  errs.push(...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain));
  errs.push(...validateSeries(obj));
  if (!isSet(obj.eventTime)) errs.push(fieldErrors.required('eventTime'));
  const type = str(obj.type);
  if (type !== 'Normal' && type !== 'Warning') errs.push(fieldErrors.invalid('type', '', `has invalid value: ${type}`));
  if (isSet(obj.firstTimestamp)) errs.push(fieldErrors.invalid('firstTimestamp', '', 'needs to be unset'));
  if (isSet(obj.lastTimestamp)) errs.push(fieldErrors.invalid('lastTimestamp', '', 'needs to be unset'));
  if (num(obj.count) !== 0) errs.push(fieldErrors.invalid('count', '', 'needs to be unset'));
  const source = asObject(obj.source);
  if (str(source.component) || str(source.host)) errs.push(fieldErrors.invalid('source', '', 'needs to be unset'));
  return errs;
}

/** --event-ttl's default: an hour */
export const DEFAULT_EVENT_TTL_SECONDS = 3600;

export function eventStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    // how long an Event stays after its last write: kube's events store hands every create
    // and update the --event-ttl, whatever the object (the registry sets the flag's value)
    ttlSeconds: DEFAULT_EVENT_TTL_SECONDS,
    allowCreateOnUpdate: true,
    // kube validates only the event rules here (the store checks the generic metadata)
    validate: (obj, c) => validateEvent(obj, c),
    validateUpdate: (obj, _old, c) => validateEvent(obj, c),
  });
}
