// The storage conformance suite once more, with the pods resource encrypted at rest (aesgcm
// first, identity second so that the suite's plaintext writes straight into etcd still
// read): against the etcd3 store, and against the cacher over it.

import { runStorageConformance } from '../testing/conformance.js';
import { cacherSetup, etcd3Setup } from '../testing/conformance-setups.js';
import { aesGcmProvider, identityProvider, lookupForPrefix } from './testing.js';

const transformers = lookupForPrefix('/pods/', [aesGcmProvider([{ name: 'key1', key: Buffer.alloc(32, 7) }]), identityProvider]);

runStorageConformance('etcd3 store, aesgcm at rest', etcd3Setup({ transformers }));
runStorageConformance('cacher over etcd3, aesgcm at rest', cacherSetup({ transformers }));
