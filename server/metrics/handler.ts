// GET /metrics and /metrics/slis in Prometheus' text format (version 0.0.4). Authorized like
// any non-resource URL: RBAC's system:monitoring role grants get on both. With several worker
// processes the text comes from `replica` (every worker's metrics merged, cluster.ts).

import type { NonResourceHandler } from '../request/non-resource.js';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';
import type { ReplicaMetricsSource } from './cluster.js';

export function createMetricsHandler(metrics: ApiserverMetrics = defaultMetrics(), replica?: ReplicaMetricsSource): NonResourceHandler {
  return async (req) => {
    const name = req.path === '/metrics' ? 'metrics' : req.path === '/metrics/slis' ? 'slis' : undefined;
    if (!name) return undefined;
    const registry = name === 'metrics' ? metrics.registry : metrics.sliRegistry;
    const body = replica ? await replica(name) : await registry.metrics();
    return { status: 200, body, contentType: registry.contentType };
  };
}
