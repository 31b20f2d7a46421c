// The PodSecurity plugin's configuration: a PodSecurityConfiguration
// (pod-security.admission.config.k8s.io/v1, v1beta1 or v1alpha1) from
// --admission-control-config-file, with kube's defaults (privileged:latest everywhere, no
// exemptions) and validation (errors prefixed as kube-apiserver prints them at start-up).

import { errorString, fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { parseLevel, parseVersion, type Policy } from './policy.js';

export interface PodSecurityConfig {
  defaults: Policy;
  exemptions: { usernames: string[]; namespaces: string[]; runtimeClasses: string[] };
}

const CONFIG_GROUP = 'pod-security.admission.config.k8s.io';
const CONFIG_VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => String(x)) : [];
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** throws an Error with kube's message when the configuration is malformed or invalid */
export function loadPodSecurityConfig(raw: unknown): PodSecurityConfig {
  const cfg = raw === undefined || raw === null ? {} : raw;
  if (!isRecord(cfg)) throw new Error('PodSecurity configuration error: expected an object');
  if (raw !== undefined && raw !== null) {
    const apiVersion = text(cfg.apiVersion);
    const [group, version] = apiVersion.split('/');
    if (group !== CONFIG_GROUP || !CONFIG_VERSIONS.includes(version ?? '') || cfg.kind !== 'PodSecurityConfiguration') {
      throw new Error(
        `PodSecurity configuration error: expected ${CONFIG_GROUP}/v1 PodSecurityConfiguration, got ${apiVersion || '""'} ${text(cfg.kind) || '""'}`,
      );
    }
  }
  const d = isRecord(cfg.defaults) ? cfg.defaults : {};
  const e = isRecord(cfg.exemptions) ? cfg.exemptions : {};
  const value = (k: string, dflt: string) => text(d[k]) || dflt;
  const errs: FieldError[] = [];
  const level = (k: string) => {
    const v = value(k, 'privileged');
    const r = parseLevel(v);
    if (r.error) errs.push(fieldErrors.invalid(`defaults.${k}`, v, r.error));
    return r.level;
  };
  const version = (k: string) => {
    const v = value(k, 'latest');
    const r = parseVersion(v);
    if (r.error) errs.push(fieldErrors.invalid(`defaults.${k}`, v, r.error));
    return r.version;
  };
  const defaults: Policy = {
    enforce: { level: level('enforce'), version: version('enforce-version') },
    warn: { level: level('warn'), version: version('warn-version') },
    audit: { level: level('audit'), version: version('audit-version') },
  };
  const list = (key: string, validate: (s: string) => string | undefined) => {
    const out: string[] = [];
    stringList(e[key]).forEach((s, i) => {
      const field = `exemptions.${key}[${i}]`;
      const problem = validate(s);
      if (problem) errs.push(fieldErrors.invalid(field, s, problem));
      else if (out.includes(s)) errs.push(fieldErrors.duplicate(field, s));
      else out.push(s);
    });
    return out;
  };
  const namespaces = list('namespaces', (s) =>
    DNS_LABEL.test(s) && s.length <= 63
      ? undefined
      : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  );
  const runtimeClasses = list('runtimeClasses', (s) =>
    DNS_SUBDOMAIN.test(s) && s.length <= 253
      ? undefined
      : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  );
  const usernames = list('usernames', (s) => (s === '' ? 'username must not be empty' : undefined));
  if (errs.length) {
    const msgs = errs.map(errorString);
    throw new Error(`PodSecurity invalid: ${msgs.length > 1 ? '[' + msgs.join(', ') + ']' : msgs[0]}`);
  }
  return { defaults, exemptions: { usernames, namespaces, runtimeClasses } };
}
