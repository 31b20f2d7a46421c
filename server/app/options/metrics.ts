// /metrics: which metrics are exposed and how often object counts are polled.

import type { KapiConfig } from '../../config/flags.js';

export interface MetricsOptions {
  /** --etcd-count-metric-poll-period; <= 0 disables apiserver_storage_objects */
  countPollPeriodMs: number;
  /** --show-hidden-metrics-for-version was given (the flag parser validated it) */
  showHiddenMetrics: boolean;
  disabledMetrics: readonly string[];
}

export function completeMetricsOptions(config: KapiConfig): MetricsOptions {
  const values = config.values;
  return {
    countPollPeriodMs: values.get('etcd-count-metric-poll-period'),
    showHiddenMetrics: values.get('show-hidden-metrics-for-version') !== '',
    disabledMetrics: values.get('disabled-metrics'),
  };
}
