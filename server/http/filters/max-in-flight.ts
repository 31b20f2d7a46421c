// The max-in-flight / priority-and-fairness slot: a pass-through for now. Long-running
// requests (watch) must stay outside any limit placed here.

import type { Filter } from '../types.js';

export function withMaxInFlight(): Filter {
  return (next) => next;
}
