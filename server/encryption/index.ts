// Encryption at rest for kapi: --encryption-provider-config and
// --encryption-provider-config-automatic-reload, as kube-apiserver 1.33 has them.
//
// loadEncryption() reads and checks the file at start-up (an error ends start-up) and returns
// the TransformerLookup that the etcd3 store and the watch-cache feed read and write through.
// With automatic reload the file is polled; a changed file that is valid replaces the
// transformers at once (every later read and write uses the new ones), an invalid one is
// logged and ignored, as kube's reload controller does. Without it, changes wait for a restart.

import { readFileSync } from 'node:fs';
import type { TransformerLookup, ValueTransformer } from '../../storage/value/transformer.js';
import { contentHash, EncryptionConfigError, parseEncryptionConfiguration } from './config.js';
import { buildTransformerOverrides, lookupFor, type StoredResource } from './transformers.js';
import type { ResourceInfo } from '../apis/types.js';
import { keyPrefixFor, storageResourceOf } from '../registry/keys.js';

export { EncryptionConfigError } from './config.js';
export type { StoredResource } from './transformers.js';

export interface EncryptionOptions {
  /** --encryption-provider-config */
  path: string;
  /** --encryption-provider-config-automatic-reload */
  automaticReload: boolean;
  /** every resource kapi stores, with its key prefix */
  resources: StoredResource[];
  /** how often the file is read while reloading is on; 2 s (kube-apiserver: 1 min) */
  pollIntervalMs?: number;
  onReload?: (info: { hash: string }) => void;
  onReloadError?: (err: Error) => void;
}

export interface Encryption {
  /** the current transformers (swapped in place on reload) */
  readonly transformers: TransformerLookup;
  /** the hash of the file content in effect */
  readonly hash: string;
  /** health checks kube-apiserver adds: with reload, `kms-providers` (healthz and readyz; no
   *  KMS here, so it always passes) and the reload post-start hook (all three endpoints) */
  readonly checkNames: { healthzAndReadyz: string[]; all: string[] };
  stop(): void;
}

interface Loaded {
  lookup: TransformerLookup;
  hash: string;
}

function load(path: string, reload: boolean, resources: StoredResource[]): Loaded {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (err) {
    throw new EncryptionConfigError(
      `error while parsing file: error while loading file: error reading encryption provider configuration file ${JSON.stringify(path)}: ${(err as Error).message}`,
    );
  }
  if (data.length === 0) {
    throw new EncryptionConfigError(
      `error while parsing file: error while loading file: encryption provider configuration file ${JSON.stringify(path)} is empty`,
    );
  }
  let config;
  try {
    config = parseEncryptionConfiguration(data.toString('utf8'), reload);
  } catch (err) {
    throw new EncryptionConfigError(`error while parsing file: ${(err as Error).message}`);
  }
  let overrides;
  try {
    overrides = buildTransformerOverrides(config);
  } catch (err) {
    throw new EncryptionConfigError(`error while building transformers: ${(err as Error).message}`);
  }
  return { lookup: lookupFor(overrides, resources), hash: contentHash(data) };
}

/** throws EncryptionConfigError (start-up must fail) */
export function loadEncryption(opts: EncryptionOptions): Encryption {
  let current = load(opts.path, opts.automaticReload, opts.resources);
  const transformers: TransformerLookup = {
    forKey: (key: string): ValueTransformer | undefined => current.lookup.forKey(key),
  };
  let timer: NodeJS.Timeout | undefined;
  let lastFailedHash = '';
  if (opts.automaticReload) {
    timer = setInterval(() => {
      let hash: string;
      try {
        hash = contentHash(readFileSync(opts.path));
      } catch (err) {
        report(err as Error, 'unreadable');
        return;
      }
      if (hash === current.hash || hash === lastFailedHash) return;
      try {
        current = load(opts.path, true, opts.resources);
        lastFailedHash = '';
        opts.onReload?.({ hash: current.hash });
      } catch (err) {
        // kept: the configuration in effect; the same bad content is reported once
        report(err as Error, hash);
      }
    }, opts.pollIntervalMs ?? 2000);
    timer.unref();
  }
  function report(err: Error, hash: string): void {
    if (hash === lastFailedHash) return;
    lastFailedHash = hash;
    opts.onReloadError?.(new Error(`error processing encryption config file ${opts.path}: ${err.message}`));
  }
  return {
    transformers,
    get hash() {
      return current.hash;
    },
    checkNames: opts.automaticReload
      ? { healthzAndReadyz: ['kms-providers'], all: ['poststarthook/start-encryption-provider-config-automatic-reload'] }
      : { healthzAndReadyz: [], all: [] },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

/** kube-apiserver's flag check */
export function checkEncryptionFlags(path: string, automaticReload: boolean): void {
  if (!path && automaticReload) {
    throw new EncryptionConfigError('--encryption-provider-config-automatic-reload must be set with --encryption-provider-config');
  }
}

/** every stored resource of the catalog with its storage group/resource (events.k8s.io
 *  Events are core `events`, as kube's encryption config names them) and key prefix */
export function storedResources(infos: Array<Pick<ResourceInfo, 'group' | 'resource'>>): StoredResource[] {
  const out = new Map<string, StoredResource>();
  for (const info of infos) {
    const keyPrefix = keyPrefixFor(info);
    if (!out.has(keyPrefix)) out.set(keyPrefix, { ...storageResourceOf(info), keyPrefix });
  }
  return [...out.values()];
}
