// kube's checks of a CRD's spec.conversion: strategy None or Webhook; Webhook needs a webhook
// with a clientConfig (url xor service, each checked as for admission webhooks) and
// conversionReviewVersions naming v1 or v1beta1; None must not carry a webhook.

import { isObject } from '../object.js';
import { validateClientConfig } from '../admissionregistration/webhook-client.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1035Label } from '../../machinery/validation/names.js';

const SUPPORTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];

export function validateConversion(conversion: unknown): FieldError[] {
  if (!isObject(conversion)) return [];
  const errs: FieldError[] = [];
  const strategy = conversion.strategy;
  if (strategy !== 'None' && strategy !== 'Webhook') {
    errs.push(fieldErrors.notSupported('spec.conversion.strategy', strategy as string, ['None', 'Webhook']));
  }
  const webhook = conversion.webhook;
  if (strategy === 'Webhook') {
    if (!isObject(webhook)) {
      errs.push(fieldErrors.required('spec.conversion.webhook', 'required when strategy is set to Webhook'));
      return errs;
    }
    if (!isObject(webhook.clientConfig))
      errs.push(fieldErrors.required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'));
    else errs.push(...validateClientConfig('spec.conversion.webhook.clientConfig', webhook.clientConfig));
    errs.push(...validateReviewVersions(webhook.conversionReviewVersions));
  } else if (webhook !== undefined && webhook !== null) {
    errs.push(fieldErrors.forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

function validateReviewVersions(value: unknown): FieldError[] {
  const path = 'spec.conversion.webhook.conversionReviewVersions';
  const versions = Array.isArray(value) ? value.map(String) : [];
  const must = `must include at least one of ${SUPPORTED_REVIEW_VERSIONS.join(', ')}`;
  if (versions.length === 0) return [fieldErrors.required(path, must)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    for (const m of isDNS1035Label(v)) errs.push(fieldErrors.invalid(`${path}[${i}]`, v, m));
    if (seen.has(v)) errs.push(fieldErrors.invalid(`${path}[${i}]`, v, 'duplicate version'));
    seen.add(v);
  });
  if (!versions.some((v) => SUPPORTED_REVIEW_VERSIONS.includes(v))) errs.push(fieldErrors.invalid(path, versions, must));
  return errs;
}
