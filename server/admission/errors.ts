// The errors admission gives clients, with kube-apiserver's codes and messages: a plugin's
// refusal (`pods "x" is forbidden: ...`), a webhook's denial and a failed webhook call.

import { errors, StatusError, type StatusReason } from '../machinery/status.js';
import type { AdmissionAttributes } from '../registry/rest.js';

/** 403 `<resource>[.<group>] "<name>" is forbidden: <why>` about the object being admitted */
export function admissionForbidden(attrs: Pick<AdmissionAttributes, 'resource' | 'name'>, why: string): StatusError {
  return errors.forbidden({ group: attrs.resource.group, resource: attrs.resource.resource, name: attrs.name }, why);
}

/** what a webhook's AdmissionResponse.status may carry */
export interface WebhookResultStatus {
  code?: number;
  message?: string;
  reason?: string;
  details?: Record<string, unknown>;
}

/** A webhook said no: its own status with at least 400, the message prefixed by who denied. */
export function webhookDenied(webhookName: string, result: WebhookResultStatus | undefined): StatusError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const r = result ?? {};
  const code = typeof r.code === 'number' && r.code >= 400 ? r.code : 400;
  let message: string;
  if (r.message) message = `${deniedBy}: ${r.message}`;
  else if (r.reason) message = `${deniedBy}: ${r.reason}`;
  else message = `${deniedBy} without explanation`;
  const details = r.details && typeof r.details === 'object' ? (r.details as StatusError['details']) : undefined;
  return new StatusError(code, (r.reason ?? '') as StatusReason, message, details);
}

/** the webhook could not be called, or answered nonsense (kube's ErrCallingWebhook) */
export class WebhookCallError extends Error {
  constructor(
    readonly webhookName: string,
    readonly reason: string,
  ) {
    super(`failed calling webhook "${webhookName}": ${reason}`);
    this.name = 'WebhookCallError';
  }
}

/** how a call failure reaches the client when the failure policy is Fail */
export function webhookCallFailed(err: WebhookCallError): StatusError {
  return errors.internal(err.message);
}

/** a dry run reaching a webhook whose sideEffects are not None/NoneOnDryRun */
export function dryRunUnsupported(webhookName: string): StatusError {
  return errors.badRequest(`admission webhook "${webhookName}" does not support dry run`);
}
