// authentication_attempts / _duration_seconds / authenticated_user_requests and
// authorization_attempts_total / _duration_seconds, recorded by wrapping the authenticator and
// the authorizer the chain's filters call (one call per request each).

import { ANONYMOUS_USER, type Authenticator } from '../authn/authenticator.js';
import type { Authorizer } from '../authz/authorizer.js';
import type { AnonymousOptions } from '../authn/authenticator.js';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';
import { compressUsername } from './request-labels.js';
import { CounterSeries, HistogramSeries } from './series.js';

interface AuthSeries {
  users: CounterSeries<string>;
  authnAttempts: CounterSeries<string>;
  authnDuration: HistogramSeries<string>;
  authzAttempts: CounterSeries<string>;
  authzDuration: HistogramSeries<string>;
}

const seriesByMetrics = new WeakMap<ApiserverMetrics, AuthSeries>();

function authSeries(metrics: ApiserverMetrics): AuthSeries {
  let series = seriesByMetrics.get(metrics);
  if (!series) {
    series = {
      users: new CounterSeries(metrics.authenticatedUserRequests),
      authnAttempts: new CounterSeries(metrics.authenticationAttempts),
      authnDuration: new HistogramSeries(metrics.authenticationDuration),
      authzAttempts: new CounterSeries(metrics.authorizationAttempts),
      authzDuration: new HistogramSeries(metrics.authorizationDuration),
    };
    seriesByMetrics.set(metrics, series);
  }
  return series;
}

function anonymousAllowed(anonymous: AnonymousOptions | undefined, path: string): boolean {
  if (anonymous?.enabled !== true) return false;
  if (anonymous.paths === undefined) return true;
  return anonymous.paths.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : p === path));
}

/** Records every authentication: a rejected credential is "error", no credential where
 *  anonymous requests are refused is "failure", anything else (anonymous included) "success". */
export function instrumentAuthenticator(
  authenticator: Authenticator,
  anonymous: AnonymousOptions | undefined,
  metrics: ApiserverMetrics = defaultMetrics(),
): Authenticator {
  const series = authSeries(metrics);
  return async (req) => {
    const started = performance.now();
    let result = 'error';
    try {
      const user = await authenticator(req);
      const name = user ? user.username : anonymousAllowed(anonymous, req.path) ? ANONYMOUS_USER : undefined;
      if (name === undefined) {
        result = 'failure';
      } else {
        result = 'success';
        const username = compressUsername(name);
        series.users.inc(username, () => ({ username }));
      }
      return user;
    } finally {
      series.authnAttempts.inc(result, () => ({ result }));
      series.authnDuration.observe(result, () => ({ result }), (performance.now() - started) / 1000);
    }
  };
}

const DECISION_LABELS = { allow: 'allowed', deny: 'denied', noOpinion: 'no-opinion' } as const;

export function instrumentAuthorizer(authorizer: Authorizer, metrics: ApiserverMetrics = defaultMetrics()): Authorizer {
  const series = authSeries(metrics);
  return {
    async authorize(attrs) {
      const started = performance.now();
      let result = 'error';
      try {
        const r = await authorizer.authorize(attrs);
        result = DECISION_LABELS[r.decision];
        return r;
      } finally {
        series.authzAttempts.inc(result, () => ({ result }));
        series.authzDuration.observe(result, () => ({ result }), (performance.now() - started) / 1000);
      }
    },
  };
}
