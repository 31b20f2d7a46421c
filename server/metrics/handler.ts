// GET /metrics and /metrics/slis in Prometheus' text format (version 0.0.4). Authorized like
// any non-resource URL: RBAC's system:monitoring role grants get on both.

import type { NonResourceHandler } from '../request/non-resource.js';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';

export function createMetricsHandler(metrics: ApiserverMetrics = defaultMetrics()): NonResourceHandler {
  return async (req) => {
    const registry = req.path === '/metrics' ? metrics.registry : req.path === '/metrics/slis' ? metrics.sliRegistry : undefined;
    if (!registry) return undefined;
    return { status: 200, body: await registry.metrics(), contentType: registry.contentType };
  };
}
