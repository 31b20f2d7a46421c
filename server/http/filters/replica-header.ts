// --replica-response-header: names the replica that answered on every response (errors and
// 401s included), so a client behind a load balancer can attribute each answer. The filter is
// left out of the chain when the flag is off.

import type { Filter } from '../../request/types.js';

export const REPLICA_HEADER = 'Kapi-Replica';

export function withReplicaHeader(replicaName: string): Filter {
  return (next) => (state) => {
    state.res.setHeader(REPLICA_HEADER, replicaName);
    return next(state);
  };
}
