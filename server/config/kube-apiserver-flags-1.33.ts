// Every flag kube-apiserver 1.33 registers, by name, grouped by the options package that
// registers it (kubernetes/apiserver and kubernetes/component-base at v0.33, and
// kubernetes/kubernetes' kube-apiserver, controlplane and kubeapiserver options). Hand-kept
// from those packages' AddFlags functions; flags.test.ts checks that kapi accepts each one.

/** k8s.io/apiserver/pkg/server/options */
const GENERIC = [
  // ServerRunOptions.AddUniversalFlags
  'advertise-address', 'cors-allowed-origins', 'strict-transport-security-directives', 'external-hostname',
  'max-requests-inflight', 'max-mutating-requests-inflight', 'request-timeout', 'goaway-chance',
  'livez-grace-period', 'min-request-timeout', 'storage-initialization-timeout', 'shutdown-delay-duration',
  'shutdown-send-retry-after', 'shutdown-watch-termination-grace-period', 'emulation-forward-compatible',
  'runtime-config-emulation-forward-compatible',
  // EtcdOptions
  'etcd-servers-overrides', 'storage-media-type', 'delete-collection-workers', 'enable-garbage-collector',
  'watch-cache', 'default-watch-cache-size', 'watch-cache-sizes', 'storage-backend', 'etcd-servers',
  'etcd-prefix', 'etcd-keyfile', 'etcd-certfile', 'etcd-cafile', 'encryption-provider-config',
  'encryption-provider-config-automatic-reload', 'etcd-compaction-interval', 'etcd-count-metric-poll-period',
  'etcd-db-metric-poll-interval', 'etcd-healthcheck-timeout', 'etcd-readycheck-timeout', 'lease-reuse-duration-seconds',
  // SecureServingOptions
  'bind-address', 'secure-port', 'disable-http2-serving', 'cert-dir', 'tls-cert-file', 'tls-private-key-file',
  'tls-cipher-suites', 'tls-min-version', 'tls-sni-cert-key', 'http2-max-streams-per-connection',
  'permit-port-sharing', 'permit-address-sharing',
  // AuditOptions, with the batch and truncate options of the log and webhook backends
  'audit-policy-file', 'audit-log-path', 'audit-log-maxage', 'audit-log-maxbackup', 'audit-log-maxsize',
  'audit-log-format', 'audit-log-version', 'audit-log-compress', 'audit-webhook-config-file',
  'audit-webhook-initial-backoff', 'audit-webhook-batch-initial-backoff', 'audit-webhook-version',
  ...['log', 'webhook'].flatMap((backend) => [
    `audit-${backend}-mode`, `audit-${backend}-batch-buffer-size`, `audit-${backend}-batch-max-size`,
    `audit-${backend}-batch-max-wait`, `audit-${backend}-batch-throttle-enable`, `audit-${backend}-batch-throttle-qps`,
    `audit-${backend}-batch-throttle-burst`, `audit-${backend}-truncate-enabled`,
    `audit-${backend}-truncate-max-batch-size`, `audit-${backend}-truncate-max-event-size`,
  ]),
  // FeatureOptions
  'profiling', 'contention-profiling', 'debug-socket-path', 'enable-priority-and-fairness',
  // APIEnablementOptions, EgressSelectorOptions, TracingOptions, AdmissionOptions
  'runtime-config', 'egress-selector-config-file', 'tracing-config-file',
  'enable-admission-plugins', 'disable-admission-plugins', 'admission-control-config-file',
  // ClientCertAuthenticationOptions, RequestHeaderAuthenticationOptions
  'client-ca-file', 'requestheader-username-headers', 'requestheader-uid-headers', 'requestheader-group-headers',
  'requestheader-extra-headers-prefix', 'requestheader-client-ca-file', 'requestheader-allowed-names',
];

/** k8s.io/component-base: logs, metrics, the compatibility registry, help and version */
const COMPONENT_BASE = [
  'logging-format', 'log-flush-frequency', 'v', 'vmodule', 'log-text-split-stream', 'log-text-info-buffer-size',
  'log-json-split-stream', 'log-json-info-buffer-size',
  'show-hidden-metrics-for-version', 'disabled-metrics', 'allow-metric-labels', 'allow-metric-labels-manifest',
  'emulated-version', 'feature-gates', 'help', 'version',
];

/** k8s.io/kubernetes/pkg/kubeapiserver/options: built-in authentication, authorization,
 *  admission and cloud provider options */
const KUBEAPISERVER = [
  'anonymous-auth', 'api-audiences', 'enable-bootstrap-token-auth', 'authentication-config',
  'oidc-issuer-url', 'oidc-client-id', 'oidc-ca-file', 'oidc-username-claim', 'oidc-username-prefix',
  'oidc-groups-claim', 'oidc-groups-prefix', 'oidc-signing-algs', 'oidc-required-claim',
  'service-account-key-file', 'service-account-lookup', 'service-account-issuer', 'service-account-jwks-uri',
  'service-account-max-token-expiration', 'service-account-extend-token-expiration', 'token-auth-file',
  'authentication-token-webhook-config-file', 'authentication-token-webhook-cache-ttl', 'authentication-token-webhook-version',
  'authorization-mode', 'authorization-policy-file', 'authorization-webhook-config-file', 'authorization-webhook-version',
  'authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl', 'authorization-config',
  'admission-control', 'cloud-provider', 'cloud-config',
];

/** k8s.io/kubernetes/pkg/controlplane/apiserver/options: the control plane's own */
const CONTROLPLANE = [
  'event-ttl', 'enable-logs-handler', 'max-connection-bytes-per-sec', 'proxy-client-cert-file', 'proxy-client-key-file',
  'peer-ca-file', 'peer-advertise-ip', 'peer-advertise-port', 'enable-aggregator-routing',
  'aggregator-reject-forwarding-redirect', 'service-account-signing-key-file', 'service-account-signing-endpoint',
  'coordinated-leadership-lease-duration', 'coordinated-leadership-renew-deadline', 'coordinated-leadership-retry-period',
];

/** k8s.io/kubernetes/cmd/kube-apiserver/app/options: kube-apiserver's own, and the global
 *  flags of the admission plugins it re-registers */
const KUBE_APISERVER = [
  'allow-privileged', 'endpoint-reconciler-type', 'kubernetes-service-node-port', 'service-cluster-ip-range',
  'service-node-port-range', 'kubelet-preferred-address-types', 'kubelet-port', 'kubelet-read-only-port',
  'kubelet-timeout', 'kubelet-client-certificate', 'kubelet-client-key', 'kubelet-certificate-authority',
  'apiserver-count', 'default-not-ready-toleration-seconds', 'default-unreachable-toleration-seconds',
];

export const KUBE_APISERVER_1_33_FLAGS: readonly string[] = [...GENERIC, ...COMPONENT_BASE, ...KUBEAPISERVER, ...CONTROLPLANE, ...KUBE_APISERVER].sort();
