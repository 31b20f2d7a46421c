// kubernetes_healthcheck{name,type} and kubernetes_healthchecks_total{name,type,status} for
// /metrics/slis: each health check of /livez, /readyz and /healthz, wrapped to record its
// result every time it runs (type is the endpoint: livez, readyz, healthz).

import type { HealthCheck } from '../machinery/health-check.js';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';

export function observeHealthChecks(
  type: 'livez' | 'readyz' | 'healthz',
  checks: readonly HealthCheck[],
  metrics: ApiserverMetrics = defaultMetrics(),
): HealthCheck[] {
  return checks.map((c) => ({
    name: c.name,
    async check() {
      try {
        await c.check();
      } catch (err) {
        metrics.observeHealthcheck(c.name, type, false);
        throw err;
      }
      metrics.observeHealthcheck(c.name, type, true);
    },
  }));
}
