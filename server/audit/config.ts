// From the --audit-* flags to an Auditor (policy + backends), or none: without a policy file,
// or without any backend, nothing is audited (as kube-apiserver). Every mistake is a start-up
// error naming the flag.

import type { FlagValue } from '../machinery/flagset.js';
import { unionBackend, type AuditBackend, type AuditLogger } from './backend.js';
import { createLogBackend, type LogBackend } from './log-backend.js';
import { loadPolicyFile, policyEvaluator, type PolicyEvaluator } from './policy.js';
import { createWebhookBackend, WEBHOOK_MODES, type WebhookMode } from './webhook-backend.js';

export interface Auditor {
  evaluate: PolicyEvaluator;
  backend: AuditBackend;
}

export class AuditConfigError extends Error {}

const LOG_FORMATS = ['legacy', 'json'];
const GROUP_VERSION = 'audit.k8s.io/v1';

const readers = (values: ReadonlyMap<string, FlagValue>) => ({
  str: (name: string) => (values.get(name) as string | undefined) ?? '',
  num: (name: string) => (values.get(name) as number | undefined) ?? 0,
  bool: (name: string) => values.get(name) === true,
});

const fail = (msg: string): never => {
  throw new AuditConfigError(msg);
};

function logBackendFromFlags(values: ReadonlyMap<string, FlagValue>, logger: AuditLogger): LogBackend {
  const { str, num, bool } = readers(values);
  try {
    return createLogBackend({
      path: str('audit-log-path'),
      maxSizeMB: num('audit-log-maxsize'),
      maxBackups: num('audit-log-maxbackup'),
      maxAgeDays: num('audit-log-maxage'),
      compress: bool('audit-log-compress'),
      bufferSize: num('audit-log-batch-buffer-size'),
      logger,
    });
  } catch (err) {
    return fail(`--audit-log-path: ${(err as Error).message}`);
  }
}

/**
 * The log backend alone, for the primary of a --workers replica: it writes the file (and
 * rotates it) for every worker, whose events it receives as lines. Undefined when nothing
 * would be logged. The workers validate the other --audit-* flags.
 */
export function sharedLogBackendFromFlags(values: ReadonlyMap<string, FlagValue>, logger: AuditLogger): LogBackend | undefined {
  const { str } = readers(values);
  if (!str('audit-policy-file') || !str('audit-log-path')) return undefined;
  return logBackendFromFlags(values, logger);
}

/** `logSink` stands in for the log backend when another process writes the log (a worker's
 *  relay to its primary) */
export function auditorFromFlags(values: ReadonlyMap<string, FlagValue>, logger: AuditLogger, logSink?: AuditBackend): Auditor | undefined {
  const { str, num, bool } = readers(values);

  const logPath = str('audit-log-path');
  const webhookFile = str('audit-webhook-config-file');
  // validation first, as kube-apiserver's options do, whether or not a policy is given
  if (logPath) {
    for (const f of ['audit-log-maxage', 'audit-log-maxbackup', 'audit-log-maxsize']) {
      if (num(f) < 0) fail(`--${f} ${num(f)} can't be a negative number`);
    }
    const format = str('audit-log-format');
    if (!LOG_FORMATS.includes(format))
      fail(`--audit-log-format: invalid audit log format ${format}, allowed formats are "${LOG_FORMATS.join(',')}"`);
    if (format === 'legacy') fail('--audit-log-format=legacy is not supported by kapi; use json');
    if (str('audit-log-version') !== GROUP_VERSION)
      fail(`--audit-log-version: invalid group version, allowed versions are "${GROUP_VERSION}"`);
    if (!(WEBHOOK_MODES as readonly string[]).includes(str('audit-log-mode'))) {
      fail(`--audit-log-mode: invalid audit log mode ${str('audit-log-mode')}, allowed modes are "${WEBHOOK_MODES.join(',')}"`);
    }
    if (num('audit-log-batch-buffer-size') <= 0) fail('--audit-log-batch-buffer-size must be a positive number');
  }
  if (webhookFile) {
    const mode = str('audit-webhook-mode');
    if (!(WEBHOOK_MODES as readonly string[]).includes(mode)) {
      fail(`--audit-webhook-mode: invalid audit webhook mode ${mode}, allowed modes are "${WEBHOOK_MODES.join(',')}"`);
    }
    if (str('audit-webhook-version') !== GROUP_VERSION)
      fail(`--audit-webhook-version: invalid group version, allowed versions are "${GROUP_VERSION}"`);
    if (mode === 'batch') {
      if (num('audit-webhook-batch-buffer-size') <= 0)
        fail(`invalid audit batch webhook buffer size ${num('audit-webhook-batch-buffer-size')}, must be a positive number`);
      if (num('audit-webhook-batch-max-size') <= 0)
        fail(`invalid audit batch webhook max batch size ${num('audit-webhook-batch-max-size')}, must be a positive number`);
      if (num('audit-webhook-batch-max-wait') <= 0)
        fail(`invalid audit batch webhook max batch wait ${num('audit-webhook-batch-max-wait')}ms, must be a positive number`);
      if (bool('audit-webhook-batch-throttle-enable')) {
        if (num('audit-webhook-batch-throttle-qps') <= 0) fail('invalid audit batch webhook throttle QPS, must be a positive number');
        if (num('audit-webhook-batch-throttle-burst') <= 0) fail('invalid audit batch webhook throttle burst, must be a positive number');
      }
    }
  }

  const policyFile = str('audit-policy-file');
  if (!policyFile) {
    if (logPath || webhookFile) logger.warn('No audit policy file provided, no events will be recorded');
    return undefined;
  }
  let evaluate: PolicyEvaluator;
  try {
    evaluate = policyEvaluator(loadPolicyFile(policyFile));
  } catch (err) {
    return fail(`--audit-policy-file: loading audit policy file: ${(err as Error).message}`);
  }

  const backends: AuditBackend[] = [];
  if (logPath) backends.push(logSink ?? logBackendFromFlags(values, logger));
  if (webhookFile) {
    // the deprecated spelling wins only when it was changed from the default
    const deprecated = num('audit-webhook-batch-initial-backoff');
    const initialBackoffMs = deprecated !== 10_000 ? deprecated : num('audit-webhook-initial-backoff');
    try {
      backends.push(
        createWebhookBackend({
          kubeconfigFile: webhookFile,
          mode: str('audit-webhook-mode') as WebhookMode,
          initialBackoffMs,
          batch: {
            bufferSize: num('audit-webhook-batch-buffer-size'),
            maxBatchSize: num('audit-webhook-batch-max-size'),
            maxBatchWaitMs: num('audit-webhook-batch-max-wait'),
            throttleEnable: bool('audit-webhook-batch-throttle-enable'),
            throttleQPS: num('audit-webhook-batch-throttle-qps'),
            throttleBurst: num('audit-webhook-batch-throttle-burst'),
          },
          logger,
        }),
      );
    } catch (err) {
      fail(`--audit-webhook-config-file: initializing audit webhook: ${(err as Error).message}`);
    }
  }
  if (backends.length === 0) return undefined;
  return { evaluate, backend: unionBackend(backends) };
}
