// --goaway-chance: after a non-long-running HTTP/2 request, with this probability, the
// client's connection is closed gracefully (GOAWAY) so that clients behind a load balancer
// reconnect and spread over the replicas instead of sticking to one for ever.

import type { Filter } from '../../request/types.js';
import { http2SessionOf } from './connection.js';
import { isLongRunning } from './long-running.js';

export const MAX_GOAWAY_CHANCE = 0.02;

/** kube-apiserver's bounds for --goaway-chance; undefined when the value is fine */
export function validateGoawayChance(chance: number): string | undefined {
  if (!(chance >= 0 && chance <= MAX_GOAWAY_CHANCE)) return '--goaway-chance can not be less than 0 or greater than 0.02';
  return undefined;
}

export function withProbabilisticGoaway(chance: number, random: () => number = Math.random): Filter {
  if (!(chance > 0)) return (next) => next;
  return (next) => (state) => {
    if (!isLongRunning(state.info)) {
      const session = http2SessionOf(state);
      if (session && random() < chance) {
        const close = (): void => {
          if (!session.closed && !session.destroyed) session.close();
        };
        state.res.once('finish', close);
        state.res.once('close', close);
      }
    }
    return next(state);
  };
}
