// Secure serving, the handler chain's limits and features, health and graceful shutdown.

import type { KapiConfig } from '../../config/flags.js';
import { resolveAdvertiseAddress } from '../../config/advertise.js';

export interface ShutdownOptions {
  /** --shutdown-delay-duration: /readyz fails this long before the listener closes */
  delayMs: number;
  /** --shutdown-send-retry-after: keep listening and answer new requests 429 while draining */
  sendRetryAfter: boolean;
  /** --shutdown-watch-termination-grace-period: how long open watches get to drain */
  watchGraceMs: number;
}

export interface ServingOptions {
  bindAddress: string;
  securePort: number;
  /** --advertise-address, or the bind address when it is not a wildcard */
  advertiseAddress: string;
  /** --external-hostname, or the advertise address with the port: the issuer discovery's address */
  externalAddress: string;
  requestTimeoutMs: number;
  minRequestTimeoutSeconds: number;
  corsAllowedOrigins: readonly string[];
  hstsDirectives: readonly string[];
  goawayChance: number;
  /** kapi's --max-unread-response-mib, in bytes */
  maxUnreadResponseBytes: number;
  /** kapi's --max-inflight-body-mib, in bytes */
  maxInflightBodyBytes: number;
  /** kapi's --encoded-item-cache-mib, in bytes */
  encodedItemCacheBytes: number;
  /** kapi's --replica-response-header */
  replicaResponseHeader: boolean;
  livezGracePeriodMs: number;
  shutdown: ShutdownOptions;
  features: {
    responseCompression: boolean;
    cbor: boolean;
    authorizeWithSelectors: boolean;
    watchList: boolean;
    allowUnsafeMalformedObjectDeletion: boolean;
  };
}

/** `host:port`, IPv6 hosts bracketed */
export function hostPort(host: string, port: number): string {
  return (host.includes(':') ? `[${host}]` : host) + `:${port}`;
}

export function completeServingOptions(config: KapiConfig): ServingOptions {
  const values = config.values;
  const gates = config.featureGates;
  const advertiseAddress = resolveAdvertiseAddress(config.serving.advertiseAddress, config.serving.bindAddress);
  return {
    bindAddress: config.serving.bindAddress,
    securePort: config.serving.securePort,
    advertiseAddress,
    externalAddress: values.get('external-hostname') || hostPort(advertiseAddress, config.serving.securePort),
    requestTimeoutMs: values.get('request-timeout'),
    minRequestTimeoutSeconds: values.get('min-request-timeout'),
    corsAllowedOrigins: values.get('cors-allowed-origins'),
    hstsDirectives: values.get('strict-transport-security-directives'),
    goawayChance: values.get('goaway-chance'),
    maxUnreadResponseBytes: values.get('max-unread-response-mib') * 1024 * 1024,
    maxInflightBodyBytes: values.get('max-inflight-body-mib') * 1024 * 1024,
    encodedItemCacheBytes: values.get('encoded-item-cache-mib') * 1024 * 1024,
    replicaResponseHeader: values.get('replica-response-header'),
    livezGracePeriodMs: config.livezGracePeriodMs,
    shutdown: {
      delayMs: config.shutdownDelayMs,
      sendRetryAfter: values.get('shutdown-send-retry-after'),
      watchGraceMs: values.get('shutdown-watch-termination-grace-period'),
    },
    features: {
      responseCompression: gates.enabled('APIResponseCompression'),
      cbor: gates.enabled('CBORServingAndStorage'),
      authorizeWithSelectors: gates.enabled('AuthorizeWithSelectors'),
      watchList: gates.enabled('WatchList'),
      allowUnsafeMalformedObjectDeletion: gates.enabled('AllowUnsafeMalformedObjectDeletion'),
    },
  };
}
