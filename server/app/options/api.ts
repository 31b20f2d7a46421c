// The served APIs and the registry's settings: --runtime-config, the Service ranges, events'
// TTL, garbage collection and DeleteCollection's workers.

import type { KapiConfig } from '../../config/flags.js';
import type { PortRange } from '../../allocators/port-range.js';
import { loadCatalog, RuntimeConfigError, type Catalog } from '../../apis/catalog.js';
import type { Problems } from './problems.js';

export interface ApiOptions {
  /** the built-in APIs --runtime-config and the feature gates leave served */
  catalog: Catalog;
  /** --service-cluster-ip-range as given (one CIDR, or two for dual stack) */
  serviceClusterIPRange: string;
  serviceNodePortRange: PortRange;
  /** whole seconds, as kube-apiserver hands the events store uint64(EventTTL.Seconds()) */
  eventTTLSeconds: number;
  garbageCollection: boolean;
  deleteCollectionWorkers: number;
}

export function completeApiOptions(config: KapiConfig, problems: Problems): ApiOptions | undefined {
  const values = config.values;
  let catalog: Catalog | undefined;
  problems.check(() => {
    try {
      catalog = loadCatalog({ runtimeConfig: config.runtimeConfig, featureEnabled: (gate) => config.featureGates.enabled(gate) });
    } catch (err) {
      if (err instanceof RuntimeConfigError) throw new Error(`--runtime-config: ${err.message}`);
      throw err;
    }
  });
  if (!catalog) return undefined;
  return {
    catalog,
    serviceClusterIPRange: values.get('service-cluster-ip-range'),
    serviceNodePortRange: config.serviceNodePortRange,
    eventTTLSeconds: Math.max(0, Math.floor(values.get('event-ttl') / 1000)),
    garbageCollection: values.get('enable-garbage-collector'),
    deleteCollectionWorkers: values.get('delete-collection-workers'),
  };
}
