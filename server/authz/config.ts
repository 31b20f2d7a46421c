// The authorization configuration file (--authorization-config): AuthorizationConfiguration
// in apiserver.config.k8s.io/v1 (or v1beta1, v1alpha1), decoded strictly, defaulted
// (authorizedTTL 5m, unauthorizedTTL 30s) and validated with kube-apiserver's field errors.

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseConfigYaml } from '../request/yaml.js';
import { aggregate } from '../authn/jwt/config.js';
import { formatDuration, parseDuration } from '../machinery/duration.js';
import { fieldErrors, type FieldError } from '../machinery/validation/field-error.js';
import { isDNS1123Subdomain } from '../machinery/validation/names.js';
import { compileMatchCondition } from './cel.js';

export const CONFIG_GROUP = 'apiserver.config.k8s.io';
const VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];
export const MAX_MATCH_CONDITIONS = 64;

export interface WebhookConfig {
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
  timeoutMs: number;
  subjectAccessReviewVersion: string;
  matchConditionSubjectAccessReviewVersion: string;
  failurePolicy: string;
  connectionInfo: { type: string; kubeConfigFile?: string };
  matchConditions: { expression: string }[];
  /** the durations as written, for error messages */
  raw: { timeout?: string; authorizedTTL?: string; unauthorizedTTL?: string };
}

export interface AuthorizerConfig {
  type: string;
  name: string;
  webhook?: WebhookConfig;
}

export interface AuthorizationConfiguration {
  authorizers: AuthorizerConfig[];
}

export class AuthorizationConfigError extends Error {}

const KNOWN_TYPES = ['Node', 'RBAC', 'Webhook'];
const REPEATABLE = ['Webhook'];

function durationOf(v: unknown, field: string): number {
  if (v === undefined || v === null || v === '') return 0;
  if (typeof v !== 'string') throw new AuthorizationConfigError(`${field}: expected a duration string`);
  try {
    return parseDuration(v);
  } catch {
    throw new AuthorizationConfigError(`${field}: time: invalid duration ${JSON.stringify(v)}`);
  }
}

const WEBHOOK_FIELDS = new Set([
  'authorizedTTL',
  'unauthorizedTTL',
  'timeout',
  'subjectAccessReviewVersion',
  'matchConditionSubjectAccessReviewVersion',
  'failurePolicy',
  'connectionInfo',
  'matchConditions',
  'cacheAuthorizedRequests',
  'cacheUnauthorizedRequests',
]);

/** Decodes the file text (YAML or JSON), strictly; throws AuthorizationConfigError. */
export function decodeAuthorizationConfiguration(text: string): AuthorizationConfiguration {
  if (text.trim() === '') throw new AuthorizationConfigError('empty config data');
  let raw: unknown;
  try {
    raw = parseConfigYaml(text);
  } catch (err) {
    throw new AuthorizationConfigError(`error converting YAML to JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new AuthorizationConfigError("Object 'Kind' is missing in config");
  const obj = raw as Record<string, unknown>;
  if (!obj.kind) throw new AuthorizationConfigError("Object 'Kind' is missing in config");
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (obj.kind !== 'AuthorizationConfiguration' || group !== CONFIG_GROUP || !VERSIONS.includes(version ?? '')) {
    throw new AuthorizationConfigError(
      `no kind "${String(obj.kind)}" is registered for version "${apiVersion}" in scheme "pkg/apis/apiserver/install"`,
    );
  }
  for (const k of Object.keys(obj)) {
    if (!['apiVersion', 'kind', 'authorizers'].includes(k))
      throw new AuthorizationConfigError(`strict decoding error: unknown field "${k}"`);
  }
  const list = Array.isArray(obj.authorizers) ? obj.authorizers : [];
  const authorizers: AuthorizerConfig[] = list.map((a, i) => {
    const o = (a && typeof a === 'object' ? a : {}) as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (!['type', 'name', 'webhook'].includes(k))
        throw new AuthorizationConfigError(`strict decoding error: unknown field "authorizers[${i}].${k}"`);
    }
    const out: AuthorizerConfig = { type: typeof o.type === 'string' ? o.type : '', name: typeof o.name === 'string' ? o.name : '' };
    if (o.webhook && typeof o.webhook === 'object') {
      const w = o.webhook as Record<string, unknown>;
      for (const k of Object.keys(w)) {
        if (!WEBHOOK_FIELDS.has(k))
          throw new AuthorizationConfigError(`strict decoding error: unknown field "authorizers[${i}].webhook.${k}"`);
      }
      const ci = (w.connectionInfo && typeof w.connectionInfo === 'object' ? w.connectionInfo : {}) as Record<string, unknown>;
      const p = `authorizers[${i}].webhook`;
      out.webhook = {
        authorizedTTLMs: durationOf(w.authorizedTTL, `${p}.authorizedTTL`) || 5 * 60_000,
        unauthorizedTTLMs: durationOf(w.unauthorizedTTL, `${p}.unauthorizedTTL`) || 30_000,
        timeoutMs: durationOf(w.timeout, `${p}.timeout`),
        subjectAccessReviewVersion: typeof w.subjectAccessReviewVersion === 'string' ? w.subjectAccessReviewVersion : '',
        matchConditionSubjectAccessReviewVersion:
          typeof w.matchConditionSubjectAccessReviewVersion === 'string' ? w.matchConditionSubjectAccessReviewVersion : '',
        failurePolicy: typeof w.failurePolicy === 'string' ? w.failurePolicy : '',
        connectionInfo: {
          type: typeof ci.type === 'string' ? ci.type : '',
          kubeConfigFile: typeof ci.kubeConfigFile === 'string' ? ci.kubeConfigFile : undefined,
        },
        matchConditions: (Array.isArray(w.matchConditions) ? w.matchConditions : []).map((m) => ({
          expression:
            typeof (m as Record<string, unknown>)?.expression === 'string' ? ((m as Record<string, unknown>).expression as string) : '',
        })),
        raw: {
          timeout: typeof w.timeout === 'string' ? w.timeout : undefined,
          authorizedTTL: typeof w.authorizedTTL === 'string' ? w.authorizedTTL : undefined,
          unauthorizedTTL: typeof w.unauthorizedTTL === 'string' ? w.unauthorizedTTL : undefined,
        },
      };
    }
    return out;
  });
  return { authorizers };
}

function validateWebhook(w: WebhookConfig, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (w.timeoutMs === 0) errs.push(fieldErrors.required(`${p}.timeout`));
  else if (w.timeoutMs > 30_000 || w.timeoutMs < 0)
    errs.push(fieldErrors.invalid(`${p}.timeout`, formatDuration(w.timeoutMs), 'must be > 0s and <= 30s'));
  if (w.authorizedTTLMs < 0) errs.push(fieldErrors.invalid(`${p}.authorizedTTL`, formatDuration(w.authorizedTTLMs), 'must be > 0s'));
  if (w.unauthorizedTTLMs < 0) errs.push(fieldErrors.invalid(`${p}.unauthorizedTTL`, formatDuration(w.unauthorizedTTLMs), 'must be > 0s'));
  if (w.subjectAccessReviewVersion === '') errs.push(fieldErrors.required(`${p}.subjectAccessReviewVersion`));
  else if (!['v1', 'v1beta1'].includes(w.subjectAccessReviewVersion))
    errs.push(fieldErrors.notSupported(`${p}.subjectAccessReviewVersion`, w.subjectAccessReviewVersion, ['v1', 'v1beta1']));
  if (w.matchConditionSubjectAccessReviewVersion === '') {
    if (w.matchConditions.length > 0)
      errs.push(fieldErrors.required(`${p}.matchConditionSubjectAccessReviewVersion`, 'required if match conditions are specified'));
  } else if (w.matchConditionSubjectAccessReviewVersion !== 'v1') {
    errs.push(
      fieldErrors.notSupported(`${p}.matchConditionSubjectAccessReviewVersion`, w.matchConditionSubjectAccessReviewVersion, ['v1']),
    );
  }
  if (w.failurePolicy === '') errs.push(fieldErrors.required(`${p}.failurePolicy`));
  else if (!['NoOpinion', 'Deny'].includes(w.failurePolicy))
    errs.push(fieldErrors.notSupported(`${p}.failurePolicy`, w.failurePolicy, ['NoOpinion', 'Deny']));
  const ci = w.connectionInfo;
  switch (ci.type) {
    case '':
      errs.push(fieldErrors.required(`${p}.connectionInfo.type`));
      break;
    case 'InClusterConfig':
      if (ci.kubeConfigFile !== undefined)
        errs.push(fieldErrors.invalid(`${p}.connectionInfo.kubeConfigFile`, ci.kubeConfigFile, 'can only be set when type=KubeConfigFile'));
      break;
    case 'KubeConfigFile':
      if (!ci.kubeConfigFile) errs.push(fieldErrors.required(`${p}.connectionInfo.kubeConfigFile`));
      else if (!path.isAbsolute(ci.kubeConfigFile))
        errs.push(fieldErrors.invalid(`${p}.connectionInfo.kubeConfigFile`, ci.kubeConfigFile, 'must be an absolute path'));
      else {
        try {
          if (!statSync(ci.kubeConfigFile).isFile())
            errs.push(fieldErrors.invalid(`${p}.connectionInfo.kubeConfigFile`, ci.kubeConfigFile, 'must be a regular file'));
        } catch {
          errs.push(
            fieldErrors.invalid(
              `${p}.connectionInfo.kubeConfigFile`,
              ci.kubeConfigFile,
              `error loading file: stat ${ci.kubeConfigFile}: no such file or directory`,
            ),
          );
        }
      }
      break;
    default:
      errs.push(fieldErrors.notSupported(`${p}.connectionInfo.type`, ci.type, ['InClusterConfig', 'KubeConfigFile']));
  }
  if (w.matchConditions.length > MAX_MATCH_CONDITIONS) {
    errs.push(fieldErrors.tooMany(`${p}.matchConditions`, w.matchConditions.length, MAX_MATCH_CONDITIONS));
    return errs;
  }
  const seen = new Set<string>();
  w.matchConditions.forEach((m, i) => {
    const fp = `${p}.matchConditions[${i}].expression`;
    if (m.expression.trim() === '') {
      errs.push(fieldErrors.required(fp));
      return;
    }
    if (seen.has(m.expression)) {
      errs.push(fieldErrors.duplicate(fp, m.expression));
      return;
    }
    seen.add(m.expression);
    try {
      compileMatchCondition(m.expression);
    } catch (err) {
      errs.push(fieldErrors.invalid(fp, m.expression, (err as Error).message));
    }
  });
  return errs;
}

export function validateAuthorizationConfiguration(c: AuthorizationConfiguration): FieldError[] {
  const errs: FieldError[] = [];
  if (c.authorizers.length === 0) errs.push(fieldErrors.required('authorizers', 'at least one authorization mode must be defined'));
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  c.authorizers.forEach((a, i) => {
    const p = `authorizers[${i}]`;
    if (a.type === '') {
      errs.push(fieldErrors.required(`${p}.type`));
      return;
    }
    if (!KNOWN_TYPES.includes(a.type)) {
      errs.push(fieldErrors.notSupported(`${p}.type`, a.type, KNOWN_TYPES));
      return;
    }
    if (seenTypes.has(a.type) && !REPEATABLE.includes(a.type)) {
      errs.push(fieldErrors.duplicate(`${p}.type`, a.type));
      return;
    }
    seenTypes.add(a.type);
    if (a.name === '') errs.push(fieldErrors.required(`${p}.name`));
    else if (seenNames.has(a.name)) errs.push(fieldErrors.duplicate(`${p}.name`, a.name));
    else {
      const problems = isDNS1123Subdomain(a.name);
      if (problems.length) errs.push(fieldErrors.invalid(`${p}.name`, a.name, `authorizer name is invalid: ${problems.join(', ')}`));
    }
    seenNames.add(a.name);
    if (a.type === 'Webhook') {
      if (!a.webhook) errs.push(fieldErrors.required(`${p}.webhook`, 'required when type=Webhook'));
      else errs.push(...validateWebhook(a.webhook, `${p}.webhook`));
    } else if (a.webhook) {
      errs.push(fieldErrors.invalid(`${p}.webhook`, 'non-null', 'may only be specified when type=Webhook'));
    }
  });
  return errs;
}

/** reads, decodes and validates the file; throws AuthorizationConfigError with kube's text */
export function loadAuthorizationConfiguration(file: string): { text: string; config: AuthorizationConfiguration } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AuthorizationConfigError(`failed to read authorization config file ${JSON.stringify(file)}: ${(err as Error).message}`);
  }
  const config = decodeAuthorizationConfiguration(text);
  const errs = validateAuthorizationConfiguration(config);
  if (errs.length) throw new AuthorizationConfigError(aggregate(errs));
  return { text, config };
}
