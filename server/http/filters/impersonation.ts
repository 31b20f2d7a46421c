// The impersonation slot (Impersonate-User / -Group / -Uid / -Extra-*): a pass-through until
// the authorizer can check the `impersonate` verb.

import type { Filter } from '../types.js';

export function withImpersonation(): Filter {
  return (next) => next;
}
