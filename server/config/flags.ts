// kapi's command line. Names, defaults and meanings are kube-apiserver's so that harnesses
// written for kube-apiserver start kapi unchanged; the flags of the kapi group (`--data-dir`, `--workers` and others) are kapi's
// own. Flags that a later part of kapi will honour are parsed and validated now (a harness
// passing them must not fail) and kept in `KapiConfig` for that part to read.

import type { FlagKind } from '../machinery/flagset.js';
import path from 'node:path';
import { FlagError, formatFlagHelp, parseFlagSet, type FlagSpec, type FlagValue } from '../machinery/flagset.js';
import { firstAddress, isIP, parseCidr, type Cidr } from '../allocators/cidr.js';
import { parsePortRange, type PortRange } from '../allocators/port-range.js';
import { getCiphers } from 'node:tls';
import { validateCorsAllowedOrigins } from '../http/filters/cors.js';
import { validateGoawayChance } from '../http/filters/goaway.js';
import { parseNamedCertKey, tlsCipherSuites, tlsMinVersion } from '../http/tls-options.js';
import { FeatureGateError, FeatureGates, type ParsedFeatureGates } from '../features/gates.js';
import { showHiddenMetricsVersionError } from '../metrics/lifecycle.js';
import { KUBERNETES_MAJOR, KUBERNETES_MINOR } from '../machinery/version.js';

/** the release whose flags and metric lifecycle kapi follows */
const KUBE_RELEASE = { major: Number(KUBERNETES_MAJOR), minor: Number(KUBERNETES_MINOR) };

export { FlagError } from '../machinery/flagset.js';

const G_GENERIC = 'Generic';
const G_ETCD = 'Etcd';
const G_SERVING = 'Secure serving';
const G_AUTHN = 'Authentication';
const G_AUTHZ = 'Authorization';
const G_ADMISSION = 'Admission';
const G_API = 'API enablement';
const G_FEATURES = 'Feature gates';
const G_TRAFFIC = 'Traffic';
const G_MISC = 'Misc';
const G_AUDIT = 'Auditing';
const G_LOGS = 'Logs';
const G_METRICS = 'Metrics';
const G_KAPI = 'kapi';

/** Marks flags kapi parses but does not act on yet, so --help is honest about them. */
const LATER = ' [accepted; not acted on yet]';

/** a flag's spec, keeping its name and kind as literal types (for FlagName, FlagValueOf) */
function spec<const N extends string, const K extends FlagKind>(
  group: string,
  name: N,
  kind: K,
  def: FlagValue,
  usage: string,
  extra: Partial<FlagSpec> = {},
): FlagSpec & { name: N; kind: K } {
  return { group, name, kind, default: def, usage, ...extra } as FlagSpec & { name: N; kind: K };
}

export const FLAG_SPECS = [
  // Generic
  spec(
    G_GENERIC,
    'advertise-address',
    'string',
    '',
    'The IP address on which to advertise the apiserver to members of the cluster. If blank, the --bind-address is used when it is not a wildcard.',
    { typeText: 'ip' },
  ),
  spec(
    G_GENERIC,
    'service-cluster-ip-range',
    'string',
    '10.96.0.0/12',
    "A CIDR (or two, comma-separated, for dual stack) from which Service cluster IPs are allocated; its first address is the kubernetes Service's.",
  ),
  spec(
    G_GENERIC,
    'external-hostname',
    'string',
    '',
    "The hostname to use when generating externalized URLs for this master (kapi: the service account issuer discovery document's address).",
  ),
  spec(
    G_GENERIC,
    'cors-allowed-origins',
    'stringSlice',
    [],
    "List of allowed origins for CORS, comma separated. An allowed origin can be a regular expression to support subdomain matching. If this list is empty CORS will not be enabled. Each expression must pin the host's start ('^' or '//') and end ('$' or ':'), e.g. '//example\\.com(:|$)'.",
  ),
  spec(
    G_GENERIC,
    'goaway-chance',
    'float',
    0,
    'To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY) after a request; in-flight requests complete and the client reconnects, likely to another replica behind the load balancer. The fraction of requests sent a GOAWAY: min 0 (off), max .02 (1/50 requests); .001 is a recommended starting point.',
  ),
  spec(
    G_GENERIC,
    'livez-grace-period',
    'duration',
    0,
    'How long after start-up /livez keeps answering ok while start-up checks are still pending.',
  ),
  spec(
    G_GENERIC,
    'shutdown-delay-duration',
    'duration',
    0,
    'How long to keep serving after SIGTERM with /readyz failing, before listeners close.',
  ),
  spec(
    G_GENERIC,
    'shutdown-watch-termination-grace-period',
    'duration',
    0,
    'How long, on shutdown, open watches get to drain: they are ended one after another at max(count/grace, 200) per second and the ones still open afterwards are cut. 0: all are ended at once.',
  ),
  spec(
    G_GENERIC,
    'shutdown-send-retry-after',
    'bool',
    false,
    'After --shutdown-delay-duration the listener stays open until the requests in flight are done, and new requests get 429 with Retry-After and Connection: close (health endpoints are still served).',
  ),
  spec(
    G_GENERIC,
    'storage-initialization-timeout',
    'duration',
    60_000,
    'Maximum amount of time to wait for storage initialization before declaring apiserver ready.' + LATER,
  ),
  spec(
    G_GENERIC,
    'emulation-forward-compatible',
    'bool',
    false,
    'With --emulated-version, also serve the APIs introduced after the emulated version.' + LATER,
  ),
  spec(
    G_GENERIC,
    'runtime-config-emulation-forward-compatible',
    'bool',
    false,
    'With --emulated-version, allow --runtime-config to enable APIs introduced after the emulated version.' + LATER,
  ),
  spec(
    G_GENERIC,
    'emulated-version',
    'stringSlice',
    [],
    'The versions the components emulate (`kube=1.32` or `1.32`). kapi is kube-apiserver 1.33 only.' + LATER,
  ),
  spec(G_GENERIC, 'contention-profiling', 'bool', false, 'Enable block profiling, if profiling is enabled.' + LATER),
  spec(G_GENERIC, 'debug-socket-path', 'string', '', 'Serve profiling on this unix socket.' + LATER),
  spec(G_GENERIC, 'tracing-config-file', 'string', '', 'File with the apiserver tracing configuration.' + LATER),
  spec(G_GENERIC, 'enable-logs-handler', 'bool', false, 'Install a /logs handler for the apiserver logs.' + LATER, {
    deprecated: 'Log handler functionality is deprecated',
  }),
  spec(
    G_GENERIC,
    'max-connection-bytes-per-sec',
    'int',
    0,
    'Throttle each user connection to this number of bytes/sec (long-running requests).' + LATER,
  ),
  spec(
    G_GENERIC,
    'kubernetes-service-node-port',
    'int',
    0,
    'If non-zero, the kubernetes Service is of type NodePort with this port.' + LATER,
  ),
  spec(G_GENERIC, 'cloud-config', 'string', '', 'Accepted for compatibility; kapi has no cloud provider.' + LATER, {
    deprecated: 'will be removed in a future version',
  }),
  spec(
    G_GENERIC,
    'coordinated-leadership-lease-duration',
    'duration',
    15_000,
    'The duration of the lease used for coordinated leader election.' + LATER,
  ),
  spec(
    G_GENERIC,
    'coordinated-leadership-renew-deadline',
    'duration',
    10_000,
    'The deadline for renewing a coordinated leader election lease.' + LATER,
  ),
  spec(
    G_GENERIC,
    'coordinated-leadership-retry-period',
    'duration',
    2_000,
    'The period for retrying to renew a coordinated leader election lease.' + LATER,
  ),
  spec(G_GENERIC, 'peer-ca-file', 'string', '', 'CA for the serving certificates of peer apiservers (mixed-version proxy).' + LATER),
  spec(G_GENERIC, 'peer-advertise-ip', 'string', '', 'The IP peer apiservers proxy to (mixed-version proxy).' + LATER),
  spec(G_GENERIC, 'peer-advertise-port', 'string', '', 'The port peer apiservers proxy to (mixed-version proxy).' + LATER),
  spec(
    G_GENERIC,
    'request-timeout',
    'duration',
    60_000,
    "The time a handler has to finish a non-long-running request before the client gets a 504; a request's ?timeout= can only shorten it.",
  ),
  spec(
    G_GENERIC,
    'min-request-timeout',
    'int',
    1800,
    'The minimum timeout in seconds for a watch without timeoutSeconds; the server picks a random timeout in [min, 2*min) to spread out reconnections.',
  ),
  spec(
    G_GENERIC,
    'max-requests-inflight',
    'int',
    400,
    'Maximum number of non-mutating requests in flight (0: no limit); with priority and fairness, this plus --max-mutating-requests-inflight is the concurrency shared among the priority levels.',
  ),
  spec(G_GENERIC, 'max-mutating-requests-inflight', 'int', 200, 'Maximum number of mutating requests in flight (0: no limit).'),
  spec(G_GENERIC, 'enable-priority-and-fairness', 'bool', true, 'Use API Priority and Fairness instead of the max-in-flight limits.'),
  spec(
    G_GENERIC,
    'strict-transport-security-directives',
    'stringSlice',
    [],
    "Directives for HSTS, comma separated; the Strict-Transport-Security header on every response, e.g. 'max-age=31536000,includeSubDomains,preload'.",
  ),
  spec(G_GENERIC, 'allow-privileged', 'bool', false, 'If true, allow privileged containers.' + LATER),
  spec(
    G_GENERIC,
    'event-ttl',
    'duration',
    3_600_000,
    'Amount of time to retain events (an etcd lease on every event write; 0: keep them).',
  ),
  spec(
    G_GENERIC,
    'service-node-port-range',
    'string',
    '30000-32767',
    "The port range reserved for NodePort Services ('N-M', 'N+M' or 'N'), inclusive.",
    { typeText: 'portRange' },
  ),
  spec(
    G_GENERIC,
    'endpoint-reconciler-type',
    'string',
    'lease',
    'How the kubernetes Service endpoints are reconciled (master-count, lease, none). kapi runs the lease reconciler for both lease and master-count; none leaves the Endpoints alone.',
  ),
  spec(G_GENERIC, 'apiserver-count', 'int', 1, 'The number of apiservers running in the cluster (deprecated).' + LATER, {
    deprecated: 'apiserver-count is deprecated and will be removed in a future version.',
  }),
  spec(G_GENERIC, 'profiling', 'bool', true, 'Enable profiling via /debug/pprof.' + LATER),
  spec(
    G_GENERIC,
    'enable-garbage-collector',
    'bool',
    true,
    'Enable the generic garbage collector (kapi runs it, leader-elected); false: deletes add no orphan or foregroundDeletion finalizer.',
  ),
  spec(G_GENERIC, 'delete-collection-workers', 'int', 1, 'Number of workers spawned for DeleteCollection calls.'),
  spec(G_GENERIC, 'kubeconfig', 'string', '', 'Accepted for compatibility with harnesses; kapi does not use it.' + LATER),
  spec(G_GENERIC, 'cloud-provider', 'string', '', 'Accepted for compatibility; kapi has no cloud provider.' + LATER, {
    deprecated: 'will be removed in a future version',
  }),

  // Etcd
  spec(
    G_ETCD,
    'etcd-servers',
    'stringSlice',
    [],
    'List of etcd servers to connect with (scheme://ip:port), comma separated. Empty: kapi starts its own etcd member under <data-dir>/etcd.',
  ),
  spec(G_ETCD, 'etcd-prefix', 'string', '/registry', 'The prefix to prepend to all resource paths in etcd.'),
  spec(G_ETCD, 'etcd-cafile', 'string', '', 'SSL Certificate Authority file used to secure etcd communication.'),
  spec(G_ETCD, 'etcd-certfile', 'string', '', 'SSL certification file used to secure etcd communication.'),
  spec(G_ETCD, 'etcd-keyfile', 'string', '', 'SSL key file used to secure etcd communication.'),
  spec(
    G_ETCD,
    'etcd-compaction-interval',
    'duration',
    300_000,
    'The interval of compaction requests. If 0, compaction requests from the apiserver are disabled.',
  ),
  spec(G_ETCD, 'etcd-servers-overrides', 'stringSlice', [], 'Per-resource etcd servers overrides (group/resource#servers).' + LATER),
  spec(G_ETCD, 'etcd-healthcheck-timeout', 'duration', 2000, 'The timeout to use when checking etcd health.'),
  spec(G_ETCD, 'etcd-readycheck-timeout', 'duration', 2000, 'The timeout to use when checking etcd readiness.'),
  spec(
    G_ETCD,
    'etcd-count-metric-poll-period',
    'duration',
    60_000,
    'Frequency of polling etcd for the number of resources per type (apiserver_storage_objects; kapi reads the counts from the watch cache). 0 disables.',
  ),
  spec(G_ETCD, 'etcd-db-metric-poll-interval', 'duration', 30_000, 'The interval of requests to poll etcd and update metrics.' + LATER),
  spec(
    G_ETCD,
    'lease-reuse-duration-seconds',
    'int',
    60,
    'The time in seconds that each lease is reused (at most 5% of the TTL). A lower value could avoid large number of objects reusing the same lease.',
  ),
  spec(G_ETCD, 'storage-backend', 'string', '', 'The storage backend for persistence. Only etcd3 is supported.'),
  spec(
    G_ETCD,
    'storage-media-type',
    'string',
    'application/vnd.kubernetes.protobuf',
    'The media type objects are stored in etcd with (kapi stores JSON).' + LATER,
  ),
  spec(G_ETCD, 'watch-cache', 'bool', true, 'Enable the watch caching in the apiserver.'),
  spec(
    G_ETCD,
    'watch-cache-sizes',
    'stringSlice',
    [],
    'Watch cache size settings per resource (resource[.group]#size). As in kube 1.33 only 0 means something: that resource is served from etcd without a watch cache.',
  ),
  spec(
    G_ETCD,
    'default-watch-cache-size',
    'int',
    100,
    'Default watch cache size. 0 disables the watch cache for every resource that --watch-cache-sizes gives no non-zero size.',
    { deprecated: 'watch caches are sized automatically and this flag will be removed in a future version' },
  ),
  spec(
    G_ETCD,
    'encryption-provider-config',
    'string',
    '',
    'The file containing configuration for encryption providers to be used for storing secrets in etcd',
  ),
  spec(
    G_ETCD,
    'encryption-provider-config-automatic-reload',
    'bool',
    false,
    'Determines if the file set by --encryption-provider-config should be automatically reloaded if the disk contents change.',
  ),

  // Secure serving
  spec(G_SERVING, 'bind-address', 'string', '0.0.0.0', 'The IP address on which to listen for the --secure-port port.', { typeText: 'ip' }),
  spec(
    G_SERVING,
    'secure-port',
    'int',
    6443,
    'The port on which to serve HTTPS with authentication and authorization. It cannot be switched off with 0.',
  ),
  spec(
    G_SERVING,
    'cert-dir',
    'string',
    '',
    'The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored for serving.',
    { defaultText: '"<data-dir>/pki"' },
  ),
  spec(
    G_SERVING,
    'tls-cert-file',
    'string',
    '',
    "File containing the default x509 certificate for HTTPS (CA cert, if any, concatenated after server cert). Empty: a certificate signed by kapi's CA is generated in --cert-dir.",
  ),
  spec(G_SERVING, 'tls-private-key-file', 'string', '', 'File containing the default x509 private key matching --tls-cert-file.'),
  spec(
    G_SERVING,
    'tls-cipher-suites',
    'stringSlice',
    [],
    'Comma-separated list of cipher suites for the server (Go names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256). TLS 1.3 suites are not configurable. Empty: the defaults.',
  ),
  spec(
    G_SERVING,
    'tls-min-version',
    'string',
    '',
    'Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13 (default VersionTLS12).',
  ),
  spec(
    G_SERVING,
    'tls-sni-cert-key',
    'stringArray',
    [],
    'A pair of x509 certificate and private key file paths, optionally suffixed with a list of domain patterns (fully qualified, may have a leading "*." wildcard). Without patterns the certificate\'s names are used. Exact names beat wildcards, given patterns beat certificate names. Repeatable. Example: "example.crt,example.key" or "foo.crt,foo.key:*.foo.com,foo.com".',
  ),
  spec(G_SERVING, 'disable-http2-serving', 'bool', false, 'Serve HTTP/1.1 only.' + LATER),
  spec(
    G_SERVING,
    'http2-max-streams-per-connection',
    'int',
    0,
    "The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. 0: kapi's default, 1000 (kube-apiserver's is 100).",
  ),
  spec(G_SERVING, 'permit-port-sharing', 'bool', false, 'Bind with SO_REUSEPORT.' + LATER),
  spec(G_SERVING, 'permit-address-sharing', 'bool', false, 'Bind with SO_REUSEADDR.' + LATER),

  // Authentication
  spec(
    G_AUTHN,
    'client-ca-file',
    'string',
    '',
    "Any request presenting a client certificate signed by one of the authorities in this file is authenticated with the certificate's CommonName (user) and Organizations (groups). Empty: kapi's generated CA.",
  ),
  spec(
    G_AUTHN,
    'anonymous-auth',
    'bool',
    true,
    'Enables anonymous requests to the secure port (user system:anonymous, group system:unauthenticated). With --authorization-mode AlwaysAllow only the health endpoints accept them.',
  ),
  spec(G_AUTHN, 'token-auth-file', 'string', '', 'A CSV file of static bearer tokens: token,user,uid,"group1,group2".'),
  spec(
    G_AUTHN,
    'enable-bootstrap-token-auth',
    'bool',
    false,
    'Allow bootstrap tokens (secrets of type bootstrap.kubernetes.io/token in kube-system) to authenticate.',
  ),
  spec(
    G_AUTHN,
    'service-account-key-file',
    'stringArray',
    [],
    "Files with PEM RSA/ECDSA public or private keys (or certificates) that verify ServiceAccount tokens. Repeatable. Default: --tls-private-key-file, else kapi's generated <cert-dir>/sa.pub.",
  ),
  spec(
    G_AUTHN,
    'service-account-signing-key-file',
    'string',
    '',
    "The file with the private key that signs ServiceAccount tokens (TokenRequest). Default: kapi's generated <cert-dir>/sa.key.",
  ),
  spec(G_AUTHN, 'service-account-signing-endpoint', 'string', '', 'Socket of an external JWT signer for ServiceAccount tokens.' + LATER),
  spec(
    G_AUTHN,
    'service-account-issuer',
    'stringArray',
    [],
    'Identifier of the ServiceAccount token issuer (the first signs; all are accepted). Repeatable. Default (kapi): https://kubernetes.default.svc.cluster.local.',
  ),
  spec(G_AUTHN, 'service-account-jwks-uri', 'string', '', 'Overrides the URI for the JSON Web Key Set in the discovery document.'),
  spec(G_AUTHN, 'service-account-lookup', 'bool', true, 'Validate that ServiceAccount tokens exist in etcd.'),
  spec(
    G_AUTHN,
    'service-account-max-token-expiration',
    'duration',
    0,
    'The maximum validity of a ServiceAccount token the TokenRequest API issues.',
  ),
  spec(
    G_AUTHN,
    'service-account-extend-token-expiration',
    'bool',
    true,
    'Extend projected ServiceAccount token expiration during token generation.',
  ),
  spec(G_AUTHN, 'api-audiences', 'stringSlice', [], 'Identifiers of the API; tokens must be issued for one of them. Default: the issuers.'),
  spec(G_AUTHN, 'authentication-config', 'string', '', 'File with an AuthenticationConfiguration (structured JWT authenticators).'),
  spec(
    G_AUTHN,
    'authentication-token-webhook-config-file',
    'string',
    '',
    'A kubeconfig naming the TokenReview webhook (server, CA, client credentials); bearer tokens no other method accepts are sent to it.',
  ),
  spec(
    G_AUTHN,
    'authentication-token-webhook-cache-ttl',
    'duration',
    120_000,
    "How long the webhook's answers (accepted and refused) are reused per token.",
  ),
  spec(
    G_AUTHN,
    'authentication-token-webhook-version',
    'string',
    'v1beta1',
    'The authentication.k8s.io TokenReview version the webhook is sent and must answer (v1beta1 or v1).',
  ),
  spec(
    G_AUTHN,
    'requestheader-client-ca-file',
    'string',
    '',
    'Root CA for client certificates of authenticating proxies (request-header authentication).',
  ),
  spec(G_AUTHN, 'requestheader-allowed-names', 'stringSlice', [], 'Client certificate common names allowed to send the request headers.'),
  spec(G_AUTHN, 'requestheader-username-headers', 'stringSlice', [], 'Request headers to inspect for usernames (X-Remote-User is common).'),
  spec(G_AUTHN, 'requestheader-uid-headers', 'stringSlice', [], 'Request headers to inspect for UIDs (X-Remote-Uid is suggested).'),
  spec(G_AUTHN, 'requestheader-group-headers', 'stringSlice', [], 'Request headers to inspect for groups (X-Remote-Group is suggested).'),
  spec(
    G_AUTHN,
    'requestheader-extra-headers-prefix',
    'stringSlice',
    [],
    'Request header prefixes to inspect (X-Remote-Extra- is suggested).',
  ),
  spec(G_AUTHN, 'oidc-issuer-url', 'string', '', 'The URL of the OpenID issuer (https only).'),
  spec(G_AUTHN, 'oidc-client-id', 'string', '', 'The client ID for the OpenID Connect client.'),
  spec(G_AUTHN, 'oidc-ca-file', 'string', '', "The CA that signed the OpenID provider's serving certificate."),
  spec(G_AUTHN, 'oidc-username-claim', 'string', 'sub', 'The OpenID claim to use as the user name.'),
  spec(G_AUTHN, 'oidc-username-prefix', 'string', '', 'Prefix prepended to username claims.'),
  spec(G_AUTHN, 'oidc-groups-claim', 'string', '', "The OpenID claim to use as the user's groups."),
  spec(G_AUTHN, 'oidc-groups-prefix', 'string', '', 'Prefix prepended to group claims.'),
  spec(G_AUTHN, 'oidc-signing-algs', 'stringSlice', ['RS256'], 'Allowed JOSE asymmetric signing algorithms.'),
  spec(G_AUTHN, 'oidc-required-claim', 'mapStringString', {}, 'key=value pairs that must be present in the ID token.'),

  // Authorization
  spec(
    G_AUTHZ,
    'authorization-mode',
    'stringSlice',
    ['AlwaysAllow'],
    'Ordered list of authorization plugins: AlwaysAllow,AlwaysDeny,ABAC,Webhook,RBAC,Node.',
  ),
  spec(
    G_AUTHZ,
    'authorization-config',
    'string',
    '',
    'File with an AuthorizationConfiguration (structured authorizers); reloaded on change and every 60 s.',
  ),
  spec(
    G_AUTHZ,
    'authorization-policy-file',
    'string',
    '',
    'File with the ABAC policy, one JSON Policy per line, used with --authorization-mode=ABAC.',
  ),
  spec(G_AUTHZ, 'authorization-webhook-config-file', 'string', '', 'A kubeconfig file for the authorization webhook.'),
  spec(G_AUTHZ, 'authorization-webhook-cache-authorized-ttl', 'duration', 300_000, 'How long to cache allowed answers of the webhook.'),
  spec(G_AUTHZ, 'authorization-webhook-cache-unauthorized-ttl', 'duration', 30_000, 'How long to cache denied answers of the webhook.'),
  spec(G_AUTHZ, 'authorization-webhook-version', 'string', 'v1beta1', 'The SubjectAccessReview API version the webhook speaks.'),

  // Admission
  spec(
    G_ADMISSION,
    'enable-admission-plugins',
    'stringSlice',
    [],
    "Admission plugins to enable in addition to the default ones (kube-apiserver's names; an unknown name is a start-up error). They run in kube-apiserver's order whatever order they are named in.",
  ),
  spec(
    G_ADMISSION,
    'disable-admission-plugins',
    'stringSlice',
    [],
    'Admission plugins to disable although they are on by default (a plugin both enabled and disabled is a start-up error).',
  ),
  spec(
    G_ADMISSION,
    'admission-control-config-file',
    'string',
    '',
    'File with an AdmissionConfiguration (apiserver.config.k8s.io/v1): per-plugin configuration, embedded or by path.',
  ),
  spec(
    G_ADMISSION,
    'admission-control',
    'stringSlice',
    [],
    'Deprecated: use --enable-admission-plugins or --disable-admission-plugins. Exactly these plugins run (the default set is replaced).',
    { deprecated: 'Use --enable-admission-plugins or --disable-admission-plugins instead. Will be removed in a future version.' },
  ),
  spec(
    G_ADMISSION,
    'default-not-ready-toleration-seconds',
    'int',
    300,
    'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.',
  ),
  spec(
    G_ADMISSION,
    'default-unreachable-toleration-seconds',
    'int',
    300,
    'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.',
  ),

  // API enablement
  spec(
    G_API,
    'runtime-config',
    'mapStringString',
    {},
    'key=value pairs that enable or disable built-in APIs: <group>/<version>, api/all, api/ga, api/beta, api/alpha.',
  ),

  // Feature gates
  spec(
    G_FEATURES,
    'feature-gates',
    'stringSlice',
    [],
    'Comma-separated list of component:key=value pairs that describe feature gates for alpha/experimental features of different components. If the component is not specified, defaults to "kube". This flag can be repeatedly invoked. Known gates: kube-apiserver 1.33\'s.',
    { typeText: 'colonSeparatedMultimapStringString' },
  ),

  // Traffic / aggregation
  spec(
    G_TRAFFIC,
    'enable-aggregator-routing',
    'bool',
    false,
    'Route aggregator requests to endpoint IPs rather than cluster IPs. kapi has no Service network, so it always routes to a ready endpoint of the Service (EndpointSlices); false is taken as true.',
  ),
  spec(
    G_TRAFFIC,
    'proxy-client-cert-file',
    'string',
    '',
    'Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request (aggregated API servers).',
  ),
  spec(G_TRAFFIC, 'proxy-client-key-file', 'string', '', 'Private key for --proxy-client-cert-file.'),
  spec(
    G_TRAFFIC,
    'aggregator-reject-forwarding-redirect',
    'bool',
    true,
    'Do not forward redirect responses of aggregated API servers to the client.' + LATER,
  ),
  spec(G_TRAFFIC, 'egress-selector-config-file', 'string', '', 'File with the apiserver egress selector configuration.' + LATER),

  // Misc (kubelet client)
  spec(
    G_MISC,
    'kubelet-client-certificate',
    'string',
    '',
    'Path to a client cert file for TLS to kubelets (pod logs, exec, attach, port-forward, nodes/proxy).',
  ),
  spec(G_MISC, 'kubelet-client-key', 'string', '', 'Path to a client key file for TLS to kubelets.'),
  spec(
    G_MISC,
    'kubelet-certificate-authority',
    'string',
    '',
    "Path to a cert file for the certificate authority of kubelets. Without it the kubelet's serving certificate is not verified.",
  ),
  spec(
    G_MISC,
    'kubelet-preferred-address-types',
    'stringSlice',
    ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
    'Preferred NodeAddressTypes for kubelet connections.',
  ),
  spec(G_MISC, 'kubelet-timeout', 'duration', 5000, 'Timeout for kubelet operations (connecting to a kubelet).'),
  spec(G_MISC, 'kubelet-port', 'int', 10250, 'Kubelet port.' + LATER, { deprecated: 'kubelet-port is deprecated and will be removed.' }),
  spec(G_MISC, 'kubelet-read-only-port', 'int', 10255, 'Kubelet read-only port.' + LATER, {
    deprecated: 'kubelet-read-only-port is deprecated and will be removed.',
  }),

  // Auditing
  spec(G_AUDIT, 'audit-policy-file', 'string', '', 'Path to the file that defines the audit policy configuration.'),
  spec(
    G_AUDIT,
    'audit-log-path',
    'string',
    '',
    "If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.",
  ),
  spec(
    G_AUDIT,
    'audit-log-maxage',
    'int',
    366,
    'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename. Setting a value of 0 means old audit log files are not removed based on age.',
  ),
  spec(
    G_AUDIT,
    'audit-log-maxbackup',
    'int',
    100,
    "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.",
  ),
  spec(
    G_AUDIT,
    'audit-log-maxsize',
    'int',
    100,
    'The maximum size in megabytes of the audit log file before it gets rotated. Setting to 0 disables rotation (not recommended).',
  ),
  spec(G_AUDIT, 'audit-log-compress', 'bool', false, 'If set, the rotated log files will be compressed using gzip.'),
  spec(
    G_AUDIT,
    'audit-log-format',
    'string',
    'json',
    'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format. Known formats are legacy,json. (kapi writes json only.)',
  ),
  spec(
    G_AUDIT,
    'audit-log-version',
    'string',
    'audit.k8s.io/v1',
    'API group and version used for serializing audit events written to log.',
  ),
  spec(
    G_AUDIT,
    'audit-log-mode',
    'string',
    'blocking',
    'Strategy for sending audit events. Known modes are batch,blocking,blocking-strict. (kapi always writes the log asynchronously.)',
  ),
  spec(
    G_AUDIT,
    'audit-log-batch-buffer-size',
    'int',
    10000,
    'The size of the buffer to store events before writing; past it events are dropped.',
  ),
  spec(G_AUDIT, 'audit-log-batch-max-size', 'int', 1, 'The maximum size of a batch. Only used in batch mode.' + LATER),
  spec(
    G_AUDIT,
    'audit-log-batch-max-wait',
    'duration',
    0,
    "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode." + LATER,
  ),
  spec(
    G_AUDIT,
    'audit-log-batch-throttle-enable',
    'bool',
    false,
    'Whether batching throttling is enabled. Only used in batch mode.' + LATER,
  ),
  spec(
    G_AUDIT,
    'audit-log-batch-throttle-qps',
    'float',
    0,
    'Maximum average number of batches per second. Only used in batch mode.' + LATER,
  ),
  spec(
    G_AUDIT,
    'audit-log-batch-throttle-burst',
    'int',
    0,
    'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.' + LATER,
  ),
  spec(G_AUDIT, 'audit-log-truncate-enabled', 'bool', false, 'Whether event and batch truncating is enabled.' + LATER),
  spec(G_AUDIT, 'audit-log-truncate-max-batch-size', 'int', 10485760, 'Maximum size of the batch sent to the underlying backend.' + LATER),
  spec(
    G_AUDIT,
    'audit-log-truncate-max-event-size',
    'int',
    102400,
    'Maximum size of the audit event sent to the underlying backend.' + LATER,
  ),
  spec(
    G_AUDIT,
    'audit-webhook-config-file',
    'string',
    '',
    'Path to a kubeconfig formatted file that defines the audit webhook configuration.',
  ),
  spec(
    G_AUDIT,
    'audit-webhook-initial-backoff',
    'duration',
    10_000,
    'The amount of time to wait before retrying the first failed request.',
  ),
  spec(
    G_AUDIT,
    'audit-webhook-batch-initial-backoff',
    'duration',
    10_000,
    'The amount of time to wait before retrying the first failed request. (DEPRECATED: Deprecated, use --audit-webhook-initial-backoff instead.)',
    { deprecated: 'Deprecated, use --audit-webhook-initial-backoff instead.' },
  ),
  spec(
    G_AUDIT,
    'audit-webhook-mode',
    'string',
    'batch',
    'Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.',
  ),
  spec(
    G_AUDIT,
    'audit-webhook-version',
    'string',
    'audit.k8s.io/v1',
    'API group and version used for serializing audit events written to webhook.',
  ),
  spec(
    G_AUDIT,
    'audit-webhook-batch-buffer-size',
    'int',
    10000,
    'The size of the buffer to store events before batching and writing. Only used in batch mode.',
  ),
  spec(G_AUDIT, 'audit-webhook-batch-max-size', 'int', 400, 'The maximum size of a batch. Only used in batch mode.'),
  spec(
    G_AUDIT,
    'audit-webhook-batch-max-wait',
    'duration',
    30_000,
    "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.",
  ),
  spec(G_AUDIT, 'audit-webhook-batch-throttle-enable', 'bool', true, 'Whether batching throttling is enabled. Only used in batch mode.'),
  spec(G_AUDIT, 'audit-webhook-batch-throttle-qps', 'float', 10, 'Maximum average number of batches per second. Only used in batch mode.'),
  spec(
    G_AUDIT,
    'audit-webhook-batch-throttle-burst',
    'int',
    15,
    'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.',
  ),
  spec(G_AUDIT, 'audit-webhook-truncate-enabled', 'bool', false, 'Whether event and batch truncating is enabled.' + LATER),
  spec(
    G_AUDIT,
    'audit-webhook-truncate-max-batch-size',
    'int',
    10485760,
    'Maximum size of the batch sent to the underlying backend.' + LATER,
  ),
  spec(
    G_AUDIT,
    'audit-webhook-truncate-max-event-size',
    'int',
    102400,
    'Maximum size of the audit event sent to the underlying backend.' + LATER,
  ),

  // Logs
  spec(G_LOGS, 'v', 'int', 0, 'Number for the log level verbosity.', { shorthand: 'v', typeText: 'Level' }),
  spec(G_LOGS, 'vmodule', 'string', '', 'Comma-separated list of pattern=N settings for file-filtered logging.' + LATER, {
    typeText: 'pattern=N,...',
  }),
  spec(G_LOGS, 'log-flush-frequency', 'duration', 5000, 'Maximum number of seconds between log flushes.' + LATER),
  spec(G_LOGS, 'logging-format', 'string', 'text', 'Sets the log format. Permitted formats: "text".'),
  spec(
    G_LOGS,
    'log-text-split-stream',
    'bool',
    false,
    'In text format, write error messages to stderr and info messages to stdout.' + LATER,
  ),
  spec(
    G_LOGS,
    'log-text-info-buffer-size',
    'string',
    '0',
    'In text format with split streams, how many bytes of info messages may be buffered.' + LATER,
  ),
  spec(
    G_LOGS,
    'log-json-split-stream',
    'bool',
    false,
    'In JSON format, write error messages to stderr and info messages to stdout.' + LATER,
  ),
  spec(
    G_LOGS,
    'log-json-info-buffer-size',
    'string',
    '0',
    'In JSON format with split streams, how many bytes of info messages may be buffered.' + LATER,
  ),

  // Metrics
  spec(
    G_METRICS,
    'show-hidden-metrics-for-version',
    'string',
    '',
    "The previous minor version (e.g. '1.32') for which to show hidden metrics: metrics deprecated before this release are exposed again. Only the previous minor version is allowed.",
  ),
  spec(G_METRICS, 'disabled-metrics', 'stringSlice', [], 'Metrics (fully qualified names) that are not exposed, whatever else is set.'),
  spec(
    G_METRICS,
    'allow-metric-labels',
    'mapStringString',
    {},
    "The allowed values of metric labels, as '<metric>,<label>=<value>,<value>...'." + LATER,
  ),
  spec(G_METRICS, 'allow-metric-labels-manifest', 'string', '', 'A file with the --allow-metric-labels mapping.' + LATER),

  // kapi's own
  spec(
    G_KAPI,
    'data-dir',
    'string',
    './data',
    'kapi: directory for the embedded etcd member (<data-dir>/etcd), the generated PKI (<data-dir>/pki) and admin.kubeconfig.',
  ),
  spec(
    G_KAPI,
    'tls-san',
    'stringArray',
    [],
    "kapi: extra DNS name or IP for the generated serving certificate (e.g. a load balancer's). Repeatable or comma separated.",
  ),
  spec(
    G_KAPI,
    'max-unread-response-mib',
    'int',
    256,
    'kapi: MiB of response bodies this replica holds for clients that have not taken them; past it, the response whose client has gone longest without reading is cut.',
  ),
  spec(
    G_KAPI,
    'max-inflight-body-mib',
    'int',
    8,
    'kapi: MiB of request bodies of 64 KiB or more this replica (each of its --workers) acts on at once; a large body past it waits for the ones before it to be answered.',
  ),
  spec(
    G_KAPI,
    'encoded-item-cache-mib',
    'int',
    64,
    'kapi: MiB of protobuf list items this replica (each of its --workers) keeps encoded between lists, so a list re-encodes only the objects that changed since an earlier one (0 keeps none).',
  ),
  spec(
    G_KAPI,
    'allow-loopback-proxy-targets',
    'bool',
    false,
    'kapi: let pods/proxy, services/proxy and nodes/proxy reach loopback addresses, which kube-apiserver refuses; for tests and one-machine set-ups where pods and kubelets listen on 127.0.0.1.',
  ),
  spec(
    G_KAPI,
    'replica-response-header',
    'bool',
    false,
    'kapi: every response carries a Kapi-Replica header naming the replica that answered (its identity Lease), so load tests behind a load balancer can tell replicas apart.',
  ),
  spec(
    G_KAPI,
    'workers',
    'int',
    1,
    'kapi: worker processes serving this replica, sharing its listening socket; each is a full stateless replica towards etcd with its own watch cache. 0: one per CPU core. A primary process forks them, restarts those that die and stops them on SIGTERM.',
  ),
  spec(G_KAPI, 'help', 'bool', false, 'help for kapi', { shorthand: 'h' }),
  spec(G_KAPI, 'version', 'bool', false, 'Print version information and quit.'),
];

type KnownFlag = (typeof FLAG_SPECS)[number];
/** every flag kapi accepts; a misspelt name does not compile */
export type FlagName = KnownFlag['name'];
type ValueOfKind<K extends FlagKind> = K extends 'bool'
  ? boolean
  : K extends 'int' | 'float' | 'duration'
    ? number
    : K extends 'string'
      ? string
      : K extends 'stringSlice' | 'stringArray'
        ? string[]
        : K extends 'mapStringString'
          ? Record<string, string>
          : Record<string, boolean>;
/** the value of a flag, by its kind (durations in milliseconds) */
export type FlagValueOf<N extends FlagName> = ValueOfKind<Extract<KnownFlag, { name: N }>['kind']>;

/** The flags' values, typed by name: what each component reads at start-up. */
export interface LaterFlagValues {
  get<N extends FlagName>(name: N): FlagValueOf<N>;
  has(name: FlagName): boolean;
}

export interface EtcdConfig {
  /** empty: start an embedded member */
  servers: string[];
  prefix: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** 0 disables compaction by this replica */
  compactionIntervalMs: number;
  healthcheckTimeoutMs: number;
  readycheckTimeoutMs: number;
}

export interface ServingConfig {
  bindAddress: string;
  securePort: number;
  /** '' when not given */
  advertiseAddress: string;
  certDir: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  clientCaFile: string;
  /** extra names for the generated serving certificate */
  extraSans: string[];
}

export interface KapiConfig {
  dataDir: string;
  serving: ServingConfig;
  etcd: EtcdConfig;
  /** parsed --service-cluster-ip-range (one or two, dual stack) */
  serviceClusterIPRanges: Cidr[];
  /** the first address of the primary range: the kubernetes Service's ClusterIP */
  kubernetesServiceIP: string;
  /** parsed --service-node-port-range */
  serviceNodePortRange: PortRange;
  runtimeConfig: Record<string, string>;
  /** --feature-gates over kube-apiserver 1.33's gates and defaults */
  featureGates: FeatureGates;
  /** kube's start-up warnings for deprecated and GA gates that were set */
  featureGateWarnings: readonly string[];
  /** pflag's notices for deprecated flags that were set (printed before anything else) */
  flagDeprecationNotices: readonly string[];
  livezGracePeriodMs: number;
  shutdownDelayMs: number;
  verbosity: number;
  /** every flag's value by name (defaults included), for the parts that read later-issue flags */
  /** every flag's value, typed by its name (for the wiring in app.ts) */
  values: LaterFlagValues;
  /** the same values by plain name, for the subsystems that read their own flags */
  rawValues: ReadonlyMap<string, FlagValue>;
  /** the flags the command line set explicitly */
  explicitlySet: ReadonlySet<string>;
}

export type ParseOutcome = { kind: 'help'; text: string } | { kind: 'version'; text: string } | { kind: 'config'; config: KapiConfig };

export const KUBERNETES_VERSION = 'v1.33.0';

export function helpText(): string {
  return [
    "kapi: a Kubernetes-compatible API server backed by etcd. Flags follow kube-apiserver's.",
    '',
    'Usage:',
    '  kapi [flags]',
    '',
    formatFlagHelp(FLAG_SPECS),
  ].join('\n');
}

function str(values: ReadonlyMap<string, FlagValue>, name: string): string {
  return values.get(name) as string;
}
function num(values: ReadonlyMap<string, FlagValue>, name: string): number {
  return values.get(name) as number;
}
function list(values: ReadonlyMap<string, FlagValue>, name: string): string[] {
  return values.get(name) as string[];
}

/** kube-apiserver's start-up checks of the HTTP serving flags (messages as it prints them) */
function validateServingFlags(values: ReadonlyMap<string, FlagValue>): void {
  const hiddenMetrics = showHiddenMetricsVersionError(str(values, 'show-hidden-metrics-for-version'), KUBE_RELEASE);
  if (hiddenMetrics) throw new FlagError(hiddenMetrics);
  if (num(values, 'request-timeout') < 0) throw new FlagError('--request-timeout can not be negative value');
  if (num(values, 'min-request-timeout') < 0) throw new FlagError('--min-request-timeout can not be negative value');
  const goaway = validateGoawayChance(num(values, 'goaway-chance'));
  if (goaway) throw new FlagError(goaway);
  if (num(values, 'shutdown-watch-termination-grace-period') < 0) {
    throw new FlagError('shutdown-watch-termination-grace-period, if provided, can not be a negative value');
  }
  const cors = validateCorsAllowedOrigins(list(values, 'cors-allowed-origins'));
  if (cors.length > 0) throw new FlagError(cors.join(', '));
  if (num(values, 'max-unread-response-mib') < 1) throw new FlagError('--max-unread-response-mib must be at least 1');
  if (num(values, 'max-inflight-body-mib') < 1) throw new FlagError('--max-inflight-body-mib must be at least 1');
  if (num(values, 'encoded-item-cache-mib') < 0) throw new FlagError('--encoded-item-cache-mib can not be negative');
  if (num(values, 'http2-max-streams-per-connection') < 0) throw new FlagError('--http2-max-streams-per-connection can not be negative');
  try {
    tlsMinVersion(str(values, 'tls-min-version'));
    tlsCipherSuites(list(values, 'tls-cipher-suites'), getCiphers());
    for (const v of list(values, 'tls-sni-cert-key')) parseNamedCertKey(v);
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
}

/** Parses and validates kapi's command line. `cwd` resolves relative directories. Throws FlagError. */
export function parseKapiFlags(argv: readonly string[], cwd = process.cwd()): ParseOutcome {
  const { values, set, deprecationNotices } = parseFlagSet(argv, FLAG_SPECS);
  if (values.get('help')) return { kind: 'help', text: helpText() };
  if (values.get('version')) return { kind: 'version', text: `Kubernetes ${KUBERNETES_VERSION}` };

  const securePort = num(values, 'secure-port');
  if (securePort < 1 || securePort > 65535) {
    throw new FlagError(`--secure-port ${securePort} must be between 1 and 65535, inclusive. It cannot be turned off with 0`);
  }
  const bindAddress = str(values, 'bind-address');
  if (!isIP(bindAddress))
    throw new FlagError(`invalid argument ${JSON.stringify(bindAddress)} for "--bind-address" flag: failed to parse IP`);
  const advertiseAddress = str(values, 'advertise-address');
  if (advertiseAddress !== '' && !isIP(advertiseAddress)) {
    throw new FlagError(`invalid argument ${JSON.stringify(advertiseAddress)} for "--advertise-address" flag: failed to parse IP`);
  }

  const tlsCertFile = str(values, 'tls-cert-file');
  const tlsPrivateKeyFile = str(values, 'tls-private-key-file');
  if ((tlsCertFile === '') !== (tlsPrivateKeyFile === '')) {
    throw new FlagError('--tls-cert-file and --tls-private-key-file must be given together');
  }
  if ((str(values, 'etcd-certfile') === '') !== (str(values, 'etcd-keyfile') === '')) {
    throw new FlagError('--etcd-certfile and --etcd-keyfile must be given together');
  }
  const backend = str(values, 'storage-backend');
  if (backend !== '' && backend !== 'etcd3') {
    throw new FlagError(`--storage-backend invalid, allowed values: etcd3. If not specified, it will default to 'etcd3'`);
  }
  const reconciler = str(values, 'endpoint-reconciler-type');
  if (!['lease', 'master-count', 'none'].includes(reconciler)) {
    throw new FlagError(`--endpoint-reconciler-type: unknown reconciler type "${reconciler}" (lease, master-count or none)`);
  }
  if (num(values, 'workers') < 0) throw new FlagError('--workers must be 0 (one per CPU core) or a positive number');
  if (num(values, 'delete-collection-workers') < 1) throw new FlagError('--delete-collection-workers must be greater than 0');
  const prefix = str(values, 'etcd-prefix');
  if (prefix === '') throw new FlagError('--etcd-prefix must not be empty');
  const compaction = num(values, 'etcd-compaction-interval');
  if (compaction < 0) throw new FlagError('--etcd-compaction-interval must be >= 0');
  for (const name of ['livez-grace-period', 'shutdown-delay-duration']) {
    if (num(values, name) < 0) throw new FlagError(`--${name} can not be a negative value`);
  }
  validateServingFlags(values);
  const servers = list(values, 'etcd-servers').filter((s) => s !== '');
  for (const s of servers) {
    let scheme = '';
    try {
      scheme = new URL(s).protocol;
    } catch {
      // reported below
    }
    if (!['http:', 'https:', 'unix:', 'unixs:'].includes(scheme)) {
      throw new FlagError(`--etcd-servers: ${JSON.stringify(s)} is not a URL of the form scheme://host:port`);
    }
  }
  const logFormat = str(values, 'logging-format');
  if (logFormat !== 'text') throw new FlagError(`--logging-format: format ${JSON.stringify(logFormat)} not supported (kapi logs "text")`);

  const rangeTexts = str(values, 'service-cluster-ip-range')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (rangeTexts.length === 0 || rangeTexts.length > 2) {
    throw new FlagError('--service-cluster-ip-range must contain one or two (dual-stack) CIDRs');
  }
  let ranges: Cidr[];
  let kubernetesServiceIP: string;
  try {
    ranges = rangeTexts.map(parseCidr);
    kubernetesServiceIP = firstAddress(ranges[0]!);
  } catch (err) {
    throw new FlagError(`--service-cluster-ip-range: ${(err as Error).message}`);
  }
  if (ranges.length === 2 && ranges[0]!.family === ranges[1]!.family) {
    throw new FlagError('--service-cluster-ip-range: the two CIDRs of a dual-stack range must be of different IP families');
  }

  let serviceNodePortRange: PortRange;
  try {
    serviceNodePortRange = parsePortRange(str(values, 'service-node-port-range'));
  } catch (err) {
    throw new FlagError(`--service-node-port-range: ${(err as Error).message}`);
  }

  let featureGates: ParsedFeatureGates;
  try {
    featureGates = FeatureGates.parse(list(values, 'feature-gates'));
  } catch (err) {
    if (err instanceof FeatureGateError) throw new FlagError(err.message);
    throw err;
  }

  const dataDir = path.resolve(cwd, str(values, 'data-dir'));
  const certDirFlag = str(values, 'cert-dir');
  const certDir = certDirFlag === '' ? path.join(dataDir, 'pki') : path.resolve(cwd, certDirFlag);
  const extraSans = list(values, 'tls-san')
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const abs = (p: string): string => (p === '' ? '' : path.resolve(cwd, p));

  const config: KapiConfig = {
    dataDir,
    serving: {
      bindAddress,
      securePort,
      advertiseAddress,
      certDir,
      tlsCertFile: abs(tlsCertFile),
      tlsPrivateKeyFile: abs(tlsPrivateKeyFile),
      clientCaFile: abs(str(values, 'client-ca-file')),
      extraSans,
    },
    etcd: {
      servers,
      prefix,
      caFile: abs(str(values, 'etcd-cafile')),
      certFile: abs(str(values, 'etcd-certfile')),
      keyFile: abs(str(values, 'etcd-keyfile')),
      compactionIntervalMs: compaction,
      healthcheckTimeoutMs: num(values, 'etcd-healthcheck-timeout'),
      readycheckTimeoutMs: num(values, 'etcd-readycheck-timeout'),
    },
    serviceClusterIPRanges: ranges,
    kubernetesServiceIP,
    serviceNodePortRange,
    runtimeConfig: values.get('runtime-config') as Record<string, string>,
    featureGates: featureGates.gates,
    featureGateWarnings: featureGates.warnings,
    flagDeprecationNotices: deprecationNotices,
    livezGracePeriodMs: num(values, 'livez-grace-period'),
    shutdownDelayMs: num(values, 'shutdown-delay-duration'),
    verbosity: num(values, 'v'),
    // the map holds every spec's value, parsed by the spec's kind: what FlagValueOf says
    values: values as unknown as LaterFlagValues,
    rawValues: values,
    explicitlySet: set,
  };
  return { kind: 'config', config };
}
