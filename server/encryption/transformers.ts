// From a validated EncryptionConfiguration to one transformer per group/resource, as
// kube-apiserver builds them (pkg/server/options/encryptionconfig/config.go): each provider is
// a prefix (`k8s:enc:aescbc:v1:`) over its keys, each key a prefix (`<name>:`) over its
// cipher; the first provider and its first key write, any of them reads. Earlier resource
// rules win; a rule masked by an earlier `*.<group>` or `*.*` is an error. Resources no rule
// names get kube's identity transformer (plaintext, but encrypted bytes are an error).

import { aesCbcTransformer, aesGcmTransformer } from '../../storage/value/aes.js';
import { secretboxTransformer } from '../../storage/value/secretbox.js';
import {
  identityTransformer,
  KeyPrefixTable,
  PrefixTransformers,
  type PrefixedTransformer,
  type TransformerLookup,
  type ValueTransformer,
} from '../../storage/value/transformer.js';
import {
  decodeStdBase64,
  EncryptionConfigError,
  groupResourceString,
  parseGroupResource,
  type EncryptionConfiguration,
  type EncryptionKey,
  type ProviderConfiguration,
} from './config.js';

const AESCBC_PREFIX = 'k8s:enc:aescbc:v1:';
const AESGCM_PREFIX = 'k8s:enc:aesgcm:v1:';
const SECRETBOX_PREFIX = 'k8s:enc:secretbox:v1:';

/** transformers by `resource.group` (`secrets`, `deployments.apps`, `*.apps`, `*.*`) */
export type TransformerOverrides = Map<string, ValueTransformer>;

function keyed(keys: EncryptionKey[], prefix: string, cipher: (key: Buffer) => ValueTransformer, noKey: string): PrefixedTransformer {
  const perKey = keys.map((k): PrefixedTransformer => {
    const secret = decodeStdBase64(k.secret);
    if (!secret) throw new EncryptionConfigError(`could not obtain secret for named key ${k.name}: illegal base64 data`);
    let transformer: ValueTransformer;
    try {
      transformer = cipher(secret);
    } catch (err) {
      throw new EncryptionConfigError(`error while creating cipher for named key ${k.name}: ${(err as Error).message}`);
    }
    return { prefix: Buffer.from(`${k.name}:`), transformer };
  });
  return { prefix: Buffer.from(prefix), transformer: new PrefixTransformers(perKey, noKey) };
}

function providerTransformer(p: ProviderConfiguration): PrefixedTransformer {
  if (p.aesgcm) return keyed(p.aesgcm.keys, AESGCM_PREFIX, aesGcmTransformer, 'no matching key was found for the provided AES transformer');
  if (p.aescbc) return keyed(p.aescbc.keys, AESCBC_PREFIX, aesCbcTransformer, 'no matching key was found for the provided AES transformer');
  if (p.secretbox) {
    return keyed(
      p.secretbox.keys,
      SECRETBOX_PREFIX,
      secretboxTransformer,
      'no matching key was found for the provided Secretbox transformer',
    );
  }
  if (p.identity) return { prefix: Buffer.alloc(0), transformer: identityTransformer };
  if (p.kms) {
    throw new EncryptionConfigError(
      `kms provider ${JSON.stringify(p.kms.name)}: KMS (v1 and v2) encryption providers are not supported by kapi; use aescbc, aesgcm, secretbox or identity`,
    );
  }
  throw new EncryptionConfigError('provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity');
}

export function buildTransformerOverrides(config: EncryptionConfiguration): TransformerOverrides {
  const lists = new Map<string, PrefixedTransformer[]>();
  for (const rule of config.resources) {
    const providers = rule.providers.map(providerTransformer);
    for (const name of rule.resources) {
      const gr = parseGroupResource(name);
      const key = groupResourceString(gr);
      for (const masking of [
        { group: gr.group, resource: '*' },
        { group: '*', resource: '*' },
      ]) {
        if (lists.has(groupResourceString(masking))) {
          throw new EncryptionConfigError(
            `resource ${JSON.stringify(key)} is masked by earlier rule ${JSON.stringify(groupResourceString(masking))}`,
          );
        }
      }
      // the same resource in two rules: the second rule's providers come after the first's
      lists.set(key, [...(lists.get(key) ?? []), ...providers]);
    }
  }
  const out: TransformerOverrides = new Map();
  for (const [key, list] of lists) out.set(key, new PrefixTransformers(list, 'no matching prefix found'));
  return out;
}

/** the transformer of one group/resource: exact rule, then `*.<group>`, then `*.*`, else identity */
export function transformerFor(overrides: TransformerOverrides, group: string, resource: string): ValueTransformer {
  return (
    overrides.get(groupResourceString({ group, resource })) ??
    overrides.get(groupResourceString({ group, resource: '*' })) ??
    overrides.get('*.*') ??
    identityTransformer
  );
}

/** a served resource and the etcd key prefix its objects live under (`/apps/deployments/`) */
export interface StoredResource {
  group: string;
  resource: string;
  keyPrefix: string;
}

/** the lookup the store and the watch cache use: by key prefix, for every stored resource */
export function lookupFor(overrides: TransformerOverrides, resources: StoredResource[]): TransformerLookup {
  const byPrefix = new Map<string, ValueTransformer>();
  for (const r of resources) {
    const prefix = r.keyPrefix.endsWith('/') ? r.keyPrefix : `${r.keyPrefix}/`;
    byPrefix.set(prefix, transformerFor(overrides, r.group, r.resource));
  }
  return new KeyPrefixTable(byPrefix);
}
