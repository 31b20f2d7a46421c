// The storage conformance suite against the cacher: a watch cache over the etcd3 store,
// over a real etcd.

import { runStorageConformance } from '../testing/conformance.js';
import { cacherSetup } from '../testing/conformance-setups.js';

runStorageConformance('cacher over etcd3', cacherSetup());
