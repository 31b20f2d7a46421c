// The client certificate the aggregation layer presents to aggregated API servers.

import type { KapiConfig } from '../../config/flags.js';
import type { Problems } from './problems.js';

export interface AggregatorOptions {
  /** both files, or neither (no client certificate) */
  proxyClientCertificate?: { certFile: string; keyFile: string };
}

export function completeAggregatorOptions(config: KapiConfig, problems: Problems): AggregatorOptions {
  const certFile = config.values.get('proxy-client-cert-file');
  const keyFile = config.values.get('proxy-client-key-file');
  if (!certFile && !keyFile) return {};
  if (!certFile || !keyFile) {
    problems.add('--proxy-client-cert-file and --proxy-client-key-file must be given together');
    return {};
  }
  return { proxyClientCertificate: { certFile, keyFile } };
}
