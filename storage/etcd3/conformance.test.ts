// The storage conformance suite against the etcd3 store over a real etcd.

import { runStorageConformance } from '../testing/conformance.js';
import { etcd3Setup } from '../testing/conformance-setups.js';

runStorageConformance('etcd3 store', etcd3Setup());
