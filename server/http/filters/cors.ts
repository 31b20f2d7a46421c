// --cors-allowed-origins: kube-apiserver's CORS filter. A request whose Origin matches one of
// the patterns gets the Access-Control-* headers; its OPTIONS preflight is answered 204 here,
// before authentication (browsers send preflights without credentials). Other requests pass
// through untouched. Patterns are regular expressions that must pin the host's start and end.

import type { Filter } from '../../request/types.js';
import { header } from '../../request/types.js';

const ALLOWED_METHODS = ['POST', 'GET', 'OPTIONS', 'PUT', 'DELETE', 'PATCH'].join(', ');
const ALLOWED_HEADERS = [
  'Content-Type',
  'Content-Length',
  'Accept-Encoding',
  'X-CSRF-Token',
  'Authorization',
  'X-Requested-With',
  'If-Modified-Since',
].join(', ');
const EXPOSED_HEADERS = 'Date';

const HELP =
  "List of allowed origins for CORS, comma separated. An allowed origin can be a regular expression to support subdomain matching. If this list is empty CORS will not be enabled. Please ensure each expression matches the entire hostname by anchoring to the start with '^' or including the '//' prefix, and by anchoring to the end with '$' or including the ':' port separator suffix. Examples of valid expressions are '//example\\.com(:|$)' and '^https://example\\.com(:|$)'";

/** kube-apiserver's start-up checks of --cors-allowed-origins; the messages of what is wrong */
export function validateCorsAllowedOrigins(patterns: readonly string[]): string[] {
  const problems: string[] = [];
  for (const p of patterns) {
    if (p === '') {
      problems.push(`empty value in --cors-allowed-origins, help: ${HELP}`);
      continue;
    }
    let why: string | undefined;
    try {
      new RegExp(p);
      const pinsStart = p.includes('^') || p.includes('//');
      const pinsEnd = p.includes('$') || p.includes(':');
      if (!pinsStart || !pinsEnd) why = 'regular expression does not pin to start/end of host in the origin header';
    } catch (err) {
      why = (err as Error).message;
    }
    if (why) problems.push(`--cors-allowed-origins has an invalid regular expression: ${why}, help: ${HELP}`);
  }
  return problems;
}

export function withCORS(patterns: readonly string[]): Filter {
  if (patterns.length === 0) return (next) => next;
  const allowed = patterns.map((p) => new RegExp(p));
  return (next) => async (state) => {
    const origin = header(state.req, 'origin');
    if (!origin || !allowed.some((re) => re.test(origin))) {
      await next(state);
      return;
    }
    const res = state.res;
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    if (state.method === 'OPTIONS') {
      res.statusCode = 204;
      res.end();
      return;
    }
    await next(state);
  };
}
