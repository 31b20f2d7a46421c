// The --encryption-provider-config file: apiserver.config.k8s.io/v1 EncryptionConfiguration
// (or the legacy `v1` EncryptionConfig), YAML or JSON, decoded strictly (an unknown field is an
// error) and validated with kube-apiserver's rules and messages
// (k8s.io/apiserver pkg/apis/apiserver/validation/validation_encryption.go).

import { createHash } from 'node:crypto';
import { parseConfigYaml } from '../request/yaml.js';

export interface EncryptionKey {
  name: string;
  secret: string;
}

export interface KmsConfiguration {
  apiVersion: string;
  name: string;
  endpoint: string;
  cachesize?: number;
  timeout?: string;
}

/** exactly one field set (validation checks that) */
export interface ProviderConfiguration {
  aesgcm?: { keys: EncryptionKey[] };
  aescbc?: { keys: EncryptionKey[] };
  secretbox?: { keys: EncryptionKey[] };
  identity?: Record<string, never>;
  kms?: KmsConfiguration;
}

export interface ResourceConfiguration {
  resources: string[];
  providers: ProviderConfiguration[];
}

export interface EncryptionConfiguration {
  resources: ResourceConfiguration[];
}

export class EncryptionConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EncryptionConfigError';
  }
}

/** what kube-apiserver uses to notice a changed file: a hash of its bytes */
export function contentHash(data: Buffer): string {
  return `k8s:enc:unstable:1:${createHash('sha256').update(data).digest('hex')}`;
}

/** a group/resource as kube parses `deployments.apps`, `*.apps`, `*.`, `*.*`, `secrets` */
export interface GroupResource {
  group: string;
  resource: string;
}

export function parseGroupResource(s: string): GroupResource {
  const dot = s.indexOf('.');
  return dot < 0 ? { group: '', resource: s } : { group: s.slice(dot + 1), resource: s.slice(0, dot) };
}

/** kube's display form: `*.` for every core resource */
export function groupResourceString(gr: GroupResource): string {
  if (gr.group === '' && gr.resource === '*') return '*.';
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

// ---- strict decoding ----------------------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkFields(obj: Record<string, Json>, allowed: string[], path: string): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw new EncryptionConfigError(`strict decoding error: unknown field "${path}${k}"`);
  }
}

function expectType(v: unknown, kind: 'string' | 'array' | 'object' | 'number', path: string): void {
  const ok = kind === 'array' ? Array.isArray(v) : kind === 'object' ? isObject(v) : typeof v === kind;
  if (!ok)
    throw new EncryptionConfigError(
      `json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go struct field ${path} of type ${kind}`,
    );
}

function decodeKeys(v: Json | undefined, path: string): { keys: EncryptionKey[] } {
  if (v === null || v === undefined) return { keys: [] };
  expectType(v, 'object', path);
  const o = v as Record<string, Json>;
  checkFields(o, ['keys'], `${path}.`);
  const keys: EncryptionKey[] = [];
  if (o.keys !== undefined && o.keys !== null) {
    expectType(o.keys, 'array', `${path}.keys`);
    (o.keys as Json[]).forEach((k, i) => {
      const kp = `${path}.keys[${i}]`;
      expectType(k, 'object', kp);
      const ko = k as Record<string, Json>;
      checkFields(ko, ['name', 'secret'], `${kp}.`);
      if (ko.name !== undefined && ko.name !== null) expectType(ko.name, 'string', `${kp}.name`);
      if (ko.secret !== undefined && ko.secret !== null) expectType(ko.secret, 'string', `${kp}.secret`);
      keys.push({ name: (ko.name as string | undefined) ?? '', secret: (ko.secret as string | undefined) ?? '' });
    });
  }
  return { keys };
}

function decodeProvider(v: Json, path: string): ProviderConfiguration {
  expectType(v, 'object', path);
  const o = v as Record<string, Json>;
  checkFields(o, ['aesgcm', 'aescbc', 'secretbox', 'identity', 'kms'], `${path}.`);
  const p: ProviderConfiguration = {};
  // a field given as null is absent, as in Go
  if (o.aesgcm !== undefined && o.aesgcm !== null) p.aesgcm = decodeKeys(o.aesgcm, `${path}.aesgcm`);
  if (o.aescbc !== undefined && o.aescbc !== null) p.aescbc = decodeKeys(o.aescbc, `${path}.aescbc`);
  if (o.secretbox !== undefined && o.secretbox !== null) p.secretbox = decodeKeys(o.secretbox, `${path}.secretbox`);
  if (o.identity !== undefined && o.identity !== null) {
    expectType(o.identity, 'object', `${path}.identity`);
    checkFields(o.identity as Record<string, Json>, [], `${path}.identity.`);
    p.identity = {};
  }
  if (o.kms !== undefined && o.kms !== null) {
    expectType(o.kms, 'object', `${path}.kms`);
    const k = o.kms as Record<string, Json>;
    checkFields(k, ['apiVersion', 'name', 'endpoint', 'cachesize', 'timeout'], `${path}.kms.`);
    p.kms = {
      apiVersion: typeof k.apiVersion === 'string' ? k.apiVersion : 'v1',
      name: typeof k.name === 'string' ? k.name : '',
      endpoint: typeof k.endpoint === 'string' ? k.endpoint : '',
      ...(typeof k.cachesize === 'number' ? { cachesize: k.cachesize } : {}),
      ...(typeof k.timeout === 'string' ? { timeout: k.timeout } : {}),
    };
  }
  return p;
}

/** decodes the file's text; throws EncryptionConfigError */
export function decodeEncryptionConfiguration(text: string): EncryptionConfiguration {
  let doc: unknown;
  try {
    doc = parseConfigYaml(text, { uniqueKeys: true });
  } catch (err) {
    throw new EncryptionConfigError(`error converting YAML to JSON: ${(err as Error).message}`);
  }
  if (!isObject(doc)) throw new EncryptionConfigError("Object 'Kind' is missing in the configuration");
  const apiVersion = doc.apiVersion;
  const kind = doc.kind;
  if (typeof kind !== 'string' || kind === '') throw new EncryptionConfigError(`Object 'Kind' is missing in '${text.trim()}'`);
  const known =
    (apiVersion === 'apiserver.config.k8s.io/v1' && kind === 'EncryptionConfiguration') ||
    // the legacy form kube-apiserver still reads
    (apiVersion === 'v1' && kind === 'EncryptionConfig');
  if (!known) {
    throw new EncryptionConfigError(`no kind "${kind}" is registered for version "${String(apiVersion ?? '')}" in scheme`);
  }
  checkFields(doc, ['apiVersion', 'kind', 'resources'], '');
  const resources: ResourceConfiguration[] = [];
  if (doc.resources !== undefined && doc.resources !== null) {
    expectType(doc.resources, 'array', 'resources');
    (doc.resources as Json[]).forEach((r, i) => {
      const path = `resources[${i}]`;
      expectType(r, 'object', path);
      const ro = r as Record<string, Json>;
      checkFields(ro, ['resources', 'providers'], `${path}.`);
      const names: string[] = [];
      if (ro.resources !== undefined && ro.resources !== null) {
        expectType(ro.resources, 'array', `${path}.resources`);
        (ro.resources as Json[]).forEach((n, j) => {
          expectType(n, 'string', `${path}.resources[${j}]`);
          names.push(n as string);
        });
      }
      const providers: ProviderConfiguration[] = [];
      if (ro.providers !== undefined && ro.providers !== null) {
        expectType(ro.providers, 'array', `${path}.providers`);
        (ro.providers as Json[]).forEach((p, j) => providers.push(decodeProvider(p, `${path}.providers[${j}]`)));
      }
      resources.push({ resources: names, providers });
    });
  }
  return { resources };
}

// ---- validation -----------------------------------------------------------------------

const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];

const goStrings = (list: string[]): string => `[]string{${list.map((s) => JSON.stringify(s)).join(', ')}}`;
const required = (path: string, detail: string): string => `${path}: Required value: ${detail}`;
const invalid = (path: string, value: string, detail: string): string => `${path}: Invalid value: ${value}: ${detail}`;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** standard base64 (with padding) as Go's StdEncoding decodes it; undefined when invalid */
export function decodeStdBase64(s: string): Buffer | undefined {
  if (!BASE64.test(s)) return undefined;
  return Buffer.from(s, 'base64');
}

function validateKeys(keys: EncryptionKey[], path: string, sizes: number[]): string[] {
  if (keys.length === 0) return [required(path, 'at least one keys is required')];
  const errs: string[] = [];
  keys.forEach((key, i) => {
    const kp = `${path}[${i}]`;
    if (key.name === '') errs.push(required(`${kp}.name`, 'name is a mandatory field for a key'));
    if (key.secret === '') {
      errs.push(required(`${kp}.secret`, 'secret is a mandatory field for a key'));
      return;
    }
    const secret = decodeStdBase64(key.secret);
    if (!secret) {
      errs.push(invalid(`${kp}.secret`, '"REDACTED"', 'secrets must be base64 encoded'));
      return;
    }
    if (!sizes.includes(secret.length)) {
      errs.push(
        invalid(
          `${kp}.secret`,
          '"REDACTED"',
          `secret is not of the expected length, got ${secret.length}, expected one of [${sizes.join(' ')}]`,
        ),
      );
    }
  });
  return errs;
}

function validateResourceOverlap(resources: string[], path: string): string[] {
  if (resources.length < 2) return [];
  const grs = resources.map(parseGroupResource);
  let overlap = false;
  let duplicate = false;
  for (let i = 0; i < grs.length; i++) {
    for (let j = 0; j < grs.length; j++) {
      if (i === j) continue;
      const a = grs[i]!;
      const b = grs[j]!;
      if (a.group === b.group && a.resource === b.resource) {
        duplicate = true;
        continue;
      }
      if (a.group === '*' && a.resource === '*') overlap = true;
      else if (a.group === b.group && (a.resource === '*' || b.resource === '*')) overlap = true;
    }
  }
  const errs: string[] = [];
  if (duplicate) errs.push(invalid(path, goStrings(resources), 'the same resource cannot be specified multiple times'));
  if (overlap) {
    errs.push(
      invalid(
        path,
        goStrings(resources),
        "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked",
      ),
    );
  }
  return errs;
}

function validateResourceNames(resources: string[], path: string): string[] {
  const errs: string[] = [];
  resources.forEach((res, j) => {
    const p = `${path}[${j}]`;
    const v = JSON.stringify(res);
    const gr = parseGroupResource(res);
    if (res.toLowerCase() !== res) errs.push(invalid(p, v, 'resource name should not contain capital letters'));
    else if (res === '*')
      errs.push(invalid(p, v, "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"));
    else if (res === 'apiserveripinfo' || res === 'serviceipallocations' || res === 'servicenodeportallocations') {
      errs.push(invalid(p, v, 'resources which do not have REST API/s cannot be encrypted'));
    } else if (gr.group === 'events.k8s.io') {
      errs.push(
        invalid(p, v, "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"),
      );
    } else if (gr.group === 'extensions') errs.push(invalid(p, v, "'extensions' group has been removed and cannot be used for encryption"));
    else if (gr.group === '*' && gr.resource !== '*')
      errs.push(invalid(p, v, 'encrypting the same resource across groups is not supported'));
  });
  return errs;
}

function validateProvider(p: ProviderConfiguration, path: string, kmsNames: Set<string>, reload: boolean): string[] {
  const set = (['kms', 'aesgcm', 'aescbc', 'secretbox', 'identity'] as const).filter((k) => p[k] !== undefined);
  if (set.length === 0) {
    return [
      invalid(path, JSON.stringify(p), 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity'),
    ];
  }
  if (set.length > 1) {
    return [
      invalid(path, JSON.stringify(p), 'more than one provider specified in a single element, should split into different list elements'),
    ];
  }
  if (p.aesgcm) return validateKeys(p.aesgcm.keys, `${path}.aesgcm.keys`, AES_KEY_SIZES);
  if (p.aescbc) return validateKeys(p.aescbc.keys, `${path}.aescbc.keys`, AES_KEY_SIZES);
  if (p.secretbox) return validateKeys(p.secretbox.keys, `${path}.secretbox.keys`, SECRETBOX_KEY_SIZES);
  if (p.kms) {
    const errs: string[] = [];
    const k = p.kms;
    const np = `${path}.kms.name`;
    if (k.name === '') errs.push(required(np, 'name is a mandatory field for a provider'));
    if (k.apiVersion !== 'v1' && k.name.includes(':'))
      errs.push(invalid(np, JSON.stringify(k.name), `invalid KMS provider name ${k.name}, must not contain ':'`));
    if ((reload || k.apiVersion !== 'v1') && kmsNames.has(k.name)) {
      errs.push(invalid(np, JSON.stringify(k.name), `duplicate KMS provider name ${k.name}, names must be unique`));
    }
    kmsNames.add(k.name);
    if (k.endpoint === '') errs.push(invalid(`${path}.kms.endpoint`, '""', 'endpoint is a mandatory field for a kms'));
    else if (!k.endpoint.startsWith('unix:')) {
      const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(k.endpoint)?.[1] ?? '';
      errs.push(
        invalid(
          `${path}.kms.endpoint`,
          JSON.stringify(k.endpoint),
          `unsupported scheme "${scheme}" for KMS provider, only unix is supported`,
        ),
      );
    }
    if (k.apiVersion !== 'v1' && k.apiVersion !== 'v2') {
      errs.push(
        invalid(
          `${path}.kms.apiVersion`,
          JSON.stringify(k.apiVersion),
          'unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported',
        ),
      );
    }
    return errs;
  }
  return [];
}

/** kube's field errors for `config`; empty when it is valid */
export function validateEncryptionConfiguration(config: EncryptionConfiguration, reload: boolean): string[] {
  if (config.resources.length === 0) return [required('resources', 'at least one resources is required')];
  const errs: string[] = [];
  const kmsNames = new Set<string>();
  config.resources.forEach((conf, i) => {
    const r = `resources[${i}].resources`;
    const p = `resources[${i}].providers`;
    if (conf.resources.length === 0) errs.push(required(r, `at least one ${r} is required`));
    errs.push(...validateResourceOverlap(conf.resources, r));
    errs.push(...validateResourceNames(conf.resources, r));
    if (conf.providers.length === 0) errs.push(required(p, `at least one ${p} is required`));
    conf.providers.forEach((prov, j) => errs.push(...validateProvider(prov, `${p}[${j}]`, kmsNames, reload)));
  });
  return errs;
}

/** decodes and validates; throws EncryptionConfigError with kube's aggregate message */
export function parseEncryptionConfiguration(text: string, reload: boolean): EncryptionConfiguration {
  const config = decodeEncryptionConfiguration(text);
  const errs = validateEncryptionConfiguration(config, reload);
  if (errs.length === 1) throw new EncryptionConfigError(errs[0]!);
  if (errs.length > 1) throw new EncryptionConfigError(`[${errs.join(', ')}]`);
  return config;
}
