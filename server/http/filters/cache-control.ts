// Responses are never cacheable by shared caches unless a handler says otherwise.

import type { Filter } from '../../request/types.js';

export function withCacheControl(): Filter {
  // not an async layer of its own: the request goes on in the same promise
  return (next) => (state) => {
    if (!state.res.hasHeader('Cache-Control')) state.res.setHeader('Cache-Control', 'no-cache, private');
    return next(state);
  };
}
