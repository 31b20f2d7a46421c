// Responses are never cacheable by shared caches unless a handler says otherwise.

import type { Filter } from '../../request/types.js';

export function withCacheControl(): Filter {
  return (next) => async (state) => {
    if (!state.res.hasHeader('Cache-Control')) state.res.setHeader('Cache-Control', 'no-cache, private');
    await next(state);
  };
}
