// etcd, the store, the watch cache and encryption at rest, from the Etcd flags.

import type { EtcdConfig, KapiConfig } from '../../config/flags.js';
import { parseWatchCacheSizes } from '../../config/watch-cache-sizes.js';
import { checkEncryptionFlags } from '../../encryption/index.js';
import type { Problems } from './problems.js';

export interface WatchCacheOptions {
  enabled: boolean;
  /** `resource[.group]` -> size (only 0 means something: no watch cache for it) */
  sizes: ReadonlyMap<string, number>;
  defaultSize: number;
}

export interface EncryptionAtRestOptions {
  /** --encryption-provider-config as given; '' for none */
  configFile: string;
  automaticReload: boolean;
}

export interface StorageOptions {
  /** the etcd flags (--etcd-servers empty: an embedded member under dataDir) */
  etcd: EtcdConfig;
  dataDir: string;
  leaseReuseDurationSeconds: number;
  storageFormat: 'cbor' | 'json';
  watchCache: WatchCacheOptions;
  encryption: EncryptionAtRestOptions;
}

export function completeStorageOptions(config: KapiConfig, problems: Problems): StorageOptions {
  const values = config.values;
  let sizes: ReadonlyMap<string, number> = new Map();
  problems.check(() => {
    try {
      sizes = parseWatchCacheSizes(values.get('watch-cache-sizes'));
    } catch (err) {
      throw new Error(`--watch-cache-sizes: ${(err as Error).message}`);
    }
  });
  const encryption: EncryptionAtRestOptions = {
    configFile: values.get('encryption-provider-config'),
    automaticReload: values.get('encryption-provider-config-automatic-reload'),
  };
  problems.check(() => checkEncryptionFlags(encryption.configFile, encryption.automaticReload));
  return {
    etcd: config.etcd,
    dataDir: config.dataDir,
    leaseReuseDurationSeconds: values.get('lease-reuse-duration-seconds'),
    storageFormat: config.featureGates.enabled('CBORServingAndStorage') ? 'cbor' : 'json',
    watchCache: { enabled: values.get('watch-cache'), sizes, defaultSize: values.get('default-watch-cache-size') },
    encryption,
  };
}
