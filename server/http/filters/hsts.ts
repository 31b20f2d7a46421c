// --strict-transport-security-directives: the Strict-Transport-Security header on every
// response (unless a handler set its own), the directives joined by "; ".

import type { Filter } from '../../request/types.js';

export function withHSTS(directives: readonly string[]): Filter {
  const value = directives.filter((d) => d !== '').join('; ');
  if (value === '') return (next) => next;
  return (next) => (state) => {
    if (!state.res.hasHeader('Strict-Transport-Security')) state.res.setHeader('Strict-Transport-Security', value);
    return next(state);
  };
}
