// /livez, /healthz and /readyz: what each checks. Post-start hooks report themselves to
// /readyz; shutdown makes /readyz fail first.

import type { EtcdClient } from '../../../storage/etcd/types.js';
import type { CacheFeed } from '../../../storage/cacher/index.js';
import type { Encryption } from '../../encryption/index.js';
import { logCheck, namedCheck, pingCheck, shutdownCheck, type HealthCheck } from '../../http/health.js';
import type { PostStartHooks } from '../../http/post-start-hooks.js';
import type { EtcdConfig } from '../../config/flags.js';

export interface HealthChecks {
  livez: HealthCheck[];
  healthz: HealthCheck[];
  readyz: HealthCheck[];
}

function etcdCheck(etcd: EtcdClient, name: string, timeoutMs: number): HealthCheck {
  return namedCheck(name, async () => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        etcd.status(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`etcd did not answer within ${timeoutMs}ms`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  });
}

/** checks that always pass, for names kube-apiserver reports that have nothing to check here */
const passing = (names: readonly string[] = []): HealthCheck[] => names.map((n) => namedCheck(n, async () => {}));

export function healthChecks(deps: {
  etcd: EtcdClient;
  etcdOptions: EtcdConfig;
  feed?: CacheFeed;
  encryption?: Encryption;
  hooks: PostStartHooks;
  /** false until the server listens, and again once shutdown has begun */
  ready: () => boolean;
}): HealthChecks {
  const { etcd, etcdOptions, feed, encryption, hooks } = deps;
  const cacheCheck = namedCheck('watch-cache', async () => {
    if (feed && !feed.synced) throw new Error('watch cache not synced yet');
  });
  const livez = [pingCheck, logCheck, etcdCheck(etcd, 'etcd', etcdOptions.healthcheckTimeoutMs), hooks.check('bootstrap-controller')];
  // with --encryption-provider-config-automatic-reload kube-apiserver adds its reload hook
  // everywhere and a `kms-providers` check (no KMS here: it passes) to healthz and readyz
  livez.push(...passing(encryption?.checkNames.all));
  const kmsChecks = passing(encryption?.checkNames.healthzAndReadyz);
  return {
    livez,
    healthz: [...livez, ...kmsChecks],
    readyz: [
      pingCheck,
      logCheck,
      etcdCheck(etcd, 'etcd', etcdOptions.healthcheckTimeoutMs),
      etcdCheck(etcd, 'etcd-readiness', etcdOptions.readycheckTimeoutMs),
      cacheCheck,
      ...kmsChecks,
      ...passing(encryption?.checkNames.all),
      ...hooks.checks(),
      shutdownCheck(() => !deps.ready()),
    ],
  };
}
