// The controllers every replica runs (bootstrap, kubernetes Service endpoints, garbage
// collector, identity Leases).

import type { KapiConfig } from '../../config/flags.js';
import type { ControllerOptions } from '../../controllers/index.js';

export type EndpointReconcilerType = NonNullable<ControllerOptions['endpointReconciler']>;

const RECONCILERS: readonly EndpointReconcilerType[] = ['lease', 'master-count', 'none'];

/** the flag parser refused other values; the check narrows the type */
function reconcilerOf(value: string): EndpointReconcilerType {
  const found = RECONCILERS.find((r) => r === value);
  if (!found) throw new Error(`--endpoint-reconciler-type: unknown reconciler type "${value}"`);
  return found;
}

export function completeControllerOptions(config: KapiConfig): Required<Omit<ControllerOptions, 'rootCaPem'>> {
  return {
    garbageCollector: config.values.get('enable-garbage-collector'),
    endpointReconciler: reconcilerOf(config.values.get('endpoint-reconciler-type')),
    apiServerIdentity: config.featureGates.enabled('APIServerIdentity'),
  };
}
