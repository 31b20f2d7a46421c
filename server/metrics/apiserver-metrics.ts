// The metrics kapi exposes at /metrics and /metrics/slis: kube-apiserver 1.33's names, label
// names, types, buckets and stability prefixes in the help text, on prom-client registries.
// One process-wide set (as kube-apiserver's legacy registry): the handler chain, the etcd
// client wrapper and the health checks all record into defaultMetrics(). With --workers each
// worker has its set; a metric's `aggregator` says how /metrics merges them (cluster.ts):
// summed unless declared, the same value in every worker `first`, a state `max` or `min`.

import { createHash } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { defaultVersionInfo } from '../machinery/version.js';
import { CounterSeries, HistogramSeries } from './series.js';
import { deprecatedLongAgo, lifecycleHelp, lifecycleOf, type ReleaseVersion } from './lifecycle.js';

/** request latency buckets of apiserver_request_duration_seconds and etcd_request_duration_seconds */
export const LATENCY_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** 1 KB to 1 GB, a factor of 10 apart */
export const RESPONSE_SIZE_BUCKETS = [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
/** 1 KiB doubling 8 times */
export const WATCH_EVENT_SIZE_BUCKETS = Array.from({ length: 8 }, (_, i) => 1024 * 2 ** i);
/** 1 ms doubling 15 times */
export const AUTH_LATENCY_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

const REQUEST_LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'] as const;
const LATENCY_LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
const SIZE_LABELS = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

const stable = (help: string) => lifecycleHelp(help, { stability: 'STABLE' });
const alpha = (help: string) => lifecycleHelp(help, { stability: 'ALPHA' });
const beta = (help: string) => lifecycleHelp(help, { stability: 'BETA' });
const deprecatedAlpha = (help: string, since: string) => lifecycleHelp(help, { stability: 'ALPHA', deprecatedVersion: since });

/** in-flight requests by kind, reported as the highest count seen in each period */
export class InflightWatermark {
  readOnly = 0;
  mutating = 0;
  private maxReadOnly = 0;
  private maxMutating = 0;

  start(readOnly: boolean): void {
    if (readOnly) {
      if (++this.readOnly > this.maxReadOnly) this.maxReadOnly = this.readOnly;
    } else if (++this.mutating > this.maxMutating) {
      this.maxMutating = this.mutating;
    }
  }

  end(readOnly: boolean): void {
    if (readOnly) this.readOnly--;
    else this.mutating--;
  }

  /** the highest counts since the last call; the next period starts from the current ones */
  takeWatermarks(): { readOnly: number; mutating: number } {
    const marks = { readOnly: this.maxReadOnly, mutating: this.maxMutating };
    this.maxReadOnly = this.readOnly;
    this.maxMutating = this.mutating;
    return marks;
  }
}

export class ApiserverMetrics {
  readonly registry = new Registry();
  /** /metrics/slis */
  readonly sliRegistry = new Registry();
  readonly inflight = new InflightWatermark();
  /** whether a resource request names a served resource: others are not counted (their
   *  names come from the client and would grow the label sets without bound) */
  isServed?: (group: string, version: string, resource: string, subresource: string) => boolean;
  private watermarkTimer?: NodeJS.Timeout;

  readonly requestTotal = new Counter({
    name: 'apiserver_request_total',
    help: stable(
      'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    ),
    labelNames: REQUEST_LABELS,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: stable(
      'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    ),
    labelNames: LATENCY_LABELS,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly requestTerminations = new Counter({
    name: 'apiserver_request_terminations_total',
    help: alpha('Number of requests which apiserver terminated in self-defense.'),
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'] as const,
    registers: [this.registry],
  });
  readonly responseSizes = new Histogram({
    name: 'apiserver_response_sizes',
    help: stable('Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.'),
    labelNames: SIZE_LABELS,
    buckets: RESPONSE_SIZE_BUCKETS,
    registers: [this.registry],
  });
  readonly longRunning = new Gauge({
    name: 'apiserver_longrunning_requests',
    help: stable(
      'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
    ),
    labelNames: SIZE_LABELS,
    registers: [this.registry],
  });
  readonly watchEvents = new Counter({
    name: 'apiserver_watch_events_total',
    help: alpha('Number of events sent in watch clients'),
    labelNames: ['group', 'version', 'kind'] as const,
    registers: [this.registry],
  });
  readonly watchEventsSizes = new Histogram({
    name: 'apiserver_watch_events_sizes',
    help: alpha('Watch event size distribution in bytes'),
    labelNames: ['group', 'version', 'kind'] as const,
    buckets: WATCH_EVENT_SIZE_BUCKETS,
    registers: [this.registry],
  });
  readonly currentInflight = new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: stable('Maximal number of currently used inflight request limit of this apiserver per request kind in last second.'),
    labelNames: ['request_kind'] as const,
    registers: [this.registry],
  });
  readonly storageObjects = new Gauge({
    name: 'apiserver_storage_objects',
    help: stable('Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.'),
    labelNames: ['resource'] as const,
    aggregator: 'max',
    registers: [this.registry],
  });
  readonly etcdRequestDuration = new Histogram({
    name: 'etcd_request_duration_seconds',
    help: alpha('Etcd request latency in seconds for each operation and object type.'),
    labelNames: ['operation', 'type'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly etcdRequests = new Counter({
    name: 'etcd_requests_total',
    help: alpha('Etcd request counts for each operation and object type.'),
    labelNames: ['operation', 'type'] as const,
    registers: [this.registry],
  });
  readonly etcdRequestErrors = new Counter({
    name: 'etcd_request_errors_total',
    help: alpha('Etcd failed request counts for each operation and object type.'),
    labelNames: ['operation', 'type'] as const,
    registers: [this.registry],
  });
  readonly authenticatedUserRequests = new Counter({
    name: 'authenticated_user_requests',
    help: alpha('Counter of authenticated requests broken out by username.'),
    labelNames: ['username'] as const,
    registers: [this.registry],
  });
  readonly authenticationAttempts = new Counter({
    name: 'authentication_attempts',
    help: alpha('Counter of authenticated attempts.'),
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly authenticationDuration = new Histogram({
    name: 'authentication_duration_seconds',
    help: alpha('Authentication duration in seconds broken out by result.'),
    labelNames: ['result'] as const,
    buckets: AUTH_LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly authorizationAttempts = new Counter({
    name: 'authorization_attempts_total',
    help: alpha("Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'."),
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly authorizationDuration = new Histogram({
    name: 'authorization_duration_seconds',
    help: alpha('Authorization duration in seconds broken out by result.'),
    labelNames: ['result'] as const,
    buckets: AUTH_LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly buildInfo = new Gauge({
    name: 'kubernetes_build_info',
    help: alpha(
      "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
    ),
    labelNames: [
      'build_date',
      'compiler',
      'git_commit',
      'git_tree_state',
      'git_version',
      'go_version',
      'major',
      'minor',
      'platform',
    ] as const,
    aggregator: 'first',
    registers: [this.registry],
  });

  readonly featureEnabled = new Gauge({
    name: 'kubernetes_feature_enabled',
    help: beta('This metric records the data about the stage and enablement of a k8s feature.'),
    labelNames: ['name', 'stage'] as const,
    aggregator: 'first',
    registers: [this.registry],
  });
  readonly requestedDeprecatedApis = new Gauge({
    name: 'apiserver_requested_deprecated_apis',
    help: stable(
      'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    ),
    labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'] as const,
    aggregator: 'max',
    registers: [this.registry],
  });

  readonly authenticationConfigReloads = new Counter({
    name: 'apiserver_authentication_config_controller_automatic_reloads_total',
    help: alpha('Total number of automatic reloads of authentication configuration split by status and apiserver identity.'),
    labelNames: ['status', 'apiserver_id_hash'] as const,
    registers: [this.registry],
  });
  readonly authenticationConfigReloadTimestamp = new Gauge({
    name: 'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds',
    help: alpha('Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.'),
    labelNames: ['status', 'apiserver_id_hash'] as const,
    aggregator: 'max',
    registers: [this.registry],
  });
  readonly authorizationConfigReloads = new Counter({
    name: 'apiserver_authorization_config_controller_automatic_reloads_total',
    help: alpha('Total number of automatic reloads of authorization configuration split by status and apiserver identity.'),
    labelNames: ['status', 'apiserver_id_hash'] as const,
    registers: [this.registry],
  });
  readonly authorizationConfigReloadTimestamp = new Gauge({
    name: 'apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds',
    help: alpha('Timestamp of the last automatic reload of authorization configuration split by status and apiserver identity.'),
    labelNames: ['status', 'apiserver_id_hash'] as const,
    aggregator: 'max',
    registers: [this.registry],
  });

  readonly encryptionConfigReloads = new Counter({
    name: 'apiserver_encryption_config_controller_automatic_reloads_total',
    help: alpha('Total number of reload successes and failures of encryption configuration split by apiserver identity.'),
    labelNames: ['status', 'apiserver_id_hash'] as const,
    registers: [this.registry],
  });
  readonly encryptionConfigReloadTimestamp = new Gauge({
    name: 'apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds',
    help: alpha('Timestamp of the last successful or failed automatic reload of encryption configuration split by apiserver identity.'),
    labelNames: ['status', 'apiserver_id_hash'] as const,
    aggregator: 'max',
    registers: [this.registry],
  });
  // replaced by the status label above; hidden since 1.31 like every metric deprecated a
  // release ago or more
  readonly encryptionConfigReloadFailures = new Counter({
    name: 'apiserver_encryption_config_controller_automatic_reload_failures_total',
    help: deprecatedAlpha('Total number of failed automatic reloads of encryption configuration split by apiserver identity.', '1.30.0'),
    labelNames: ['apiserver_id_hash'] as const,
    registers: [this.registry],
  });
  readonly encryptionConfigReloadSuccesses = new Counter({
    name: 'apiserver_encryption_config_controller_automatic_reload_success_total',
    help: deprecatedAlpha(
      'Total number of successful automatic reloads of encryption configuration split by apiserver identity.',
      '1.30.0',
    ),
    labelNames: ['apiserver_id_hash'] as const,
    registers: [this.registry],
  });

  // kapi validates each kind one way (kube's handwritten rules), so declarative validation
  // can neither disagree with it nor panic: both stay 0, as in a kube whose rules agree
  readonly declarativeValidationMismatches = new Counter({
    name: 'apiserver_validation_declarative_validation_mismatch_total',
    help: beta('Number of times declarative validation results differed from handwritten validation results for core types.'),
    registers: [this.registry],
  });
  readonly declarativeValidationPanics = new Counter({
    name: 'apiserver_validation_declarative_validation_panic_total',
    help: beta('Number of times declarative validation has panicked during validation.'),
    registers: [this.registry],
  });

  // the metric lifecycle's own counts (component-base's meta metrics)
  readonly registeredMetrics = new Counter({
    name: 'registered_metrics_total',
    help: beta('The count of registered metrics broken by stability level and deprecation version.'),
    labelNames: ['stability_level', 'deprecated_version'] as const,
    aggregator: 'first',
    registers: [this.registry],
  });
  readonly disabledMetrics = new Counter({
    name: 'disabled_metrics_total',
    help: beta('The count of disabled metrics.'),
    aggregator: 'first',
    registers: [this.registry],
  });
  readonly hiddenMetrics = new Counter({
    name: 'hidden_metrics_total',
    help: beta('The count of hidden metrics.'),
    aggregator: 'first',
    registers: [this.registry],
  });

  readonly healthcheck = new Gauge({
    name: 'kubernetes_healthcheck',
    help: stable('This metric records the result of a single healthcheck.'),
    labelNames: ['name', 'type'] as const,
    aggregator: 'min',
    registers: [this.sliRegistry],
  });
  readonly healthchecksTotal = new Counter({
    name: 'kubernetes_healthchecks_total',
    help: stable('This metric records the results of all healthcheck.'),
    labelNames: ['name', 'type', 'status'] as const,
    registers: [this.sliRegistry],
  });

  constructor() {
    // process_* as every Prometheus client has them, plus node's own nodejs_* (the analogue
    // of Go's go_* in kube-apiserver)
    collectDefaultMetrics({ register: this.registry });
    const v = defaultVersionInfo();
    this.buildInfo.set(
      {
        build_date: v.buildDate,
        compiler: v.compiler,
        git_commit: v.gitCommit,
        git_tree_state: v.gitTreeState,
        git_version: v.gitVersion,
        go_version: v.goVersion,
        major: v.major,
        minor: v.minor,
        platform: v.platform,
      },
      1,
    );
    // the slis endpoint carries the process start time too
    new Gauge({
      name: 'process_start_time_seconds',
      help: alpha('Start time of the process since unix epoch in seconds.'),
      aggregator: 'min',
      registers: [this.sliRegistry],
    }).set(Math.round(Date.now() / 1000 - process.uptime()));
    this.currentInflight.set({ request_kind: 'readOnly' }, 0);
    this.currentInflight.set({ request_kind: 'mutating' }, 0);
  }

  /** publishes the in-flight watermarks once a second, as kube-apiserver does; the timer does
   *  not keep the process alive */
  startWatermarks(periodMs = 1000): void {
    if (this.watermarkTimer) return;
    this.watermarkTimer = setInterval(() => this.publishWatermarks(), periodMs);
    this.watermarkTimer.unref();
  }

  stopWatermarks(): void {
    clearInterval(this.watermarkTimer);
    this.watermarkTimer = undefined;
  }

  publishWatermarks(): void {
    const marks = this.inflight.takeWatermarks();
    this.currentInflight.set({ request_kind: 'readOnly' }, marks.readOnly);
    this.currentInflight.set({ request_kind: 'mutating' }, marks.mutating);
  }

  private readonly watchEventCounts = new CounterSeries(this.watchEvents);
  private readonly watchEventSizes = new HistogramSeries(this.watchEventsSizes);

  /** a recorder of the events one watch sends: called per event and per watcher, so the
   *  series are found by a key, not by hashing a labels object each time */
  watchEventRecorder(kind: { group: string; version: string; kind: string }): (bytes: number) => void {
    const key = `${kind.group}/${kind.version}/${kind.kind}`;
    const labels = () => ({ group: kind.group, version: kind.version, kind: kind.kind });
    return (bytes) => {
      this.watchEventCounts.inc(key, labels);
      this.watchEventSizes.observe(key, labels, bytes);
    };
  }

  /** one series per gate; kube's GA stage is the empty string */
  recordFeatureGates(gates: readonly { name: string; stage: string; enabled: boolean }[]): void {
    for (const g of gates) this.featureEnabled.set({ name: g.name, stage: g.stage === 'GA' ? '' : g.stage }, g.enabled ? 1 : 0);
  }

  /** an automatic reload of --authentication-config, --authorization-config or
   *  --encryption-provider-config, by the replica's identity as kube labels it (its sha256) */
  recordConfigReload(config: 'authentication' | 'authorization' | 'encryption', status: 'success' | 'failure', apiServerId: string): void {
    const idHash = apiServerId === '' ? '' : `sha256:${createHash('sha256').update(apiServerId).digest('hex')}`;
    const labels = { status, apiserver_id_hash: idHash };
    const [count, timestamp] =
      config === 'authentication'
        ? [this.authenticationConfigReloads, this.authenticationConfigReloadTimestamp]
        : config === 'authorization'
          ? [this.authorizationConfigReloads, this.authorizationConfigReloadTimestamp]
          : [this.encryptionConfigReloads, this.encryptionConfigReloadTimestamp];
    count.inc(labels);
    timestamp.set(labels, Date.now() / 1000);
    if (config === 'encryption')
      (status === 'success' ? this.encryptionConfigReloadSuccesses : this.encryptionConfigReloadFailures).inc({
        apiserver_id_hash: idHash,
      });
  }

  /**
   * kube's metric lifecycle, once at start-up: metrics deprecated before `release` and those
   * named by --disabled-metrics leave the registry (recording into them stays harmless);
   * --show-hidden-metrics-for-version keeps the deprecated ones. Counts what it did in the
   * meta metrics. Collectors kube does not define (process_*, nodejs_*) are left alone.
   */
  applyLifecycle(opts: { release?: ReleaseVersion; showHidden: boolean; disabled: readonly string[] }): void {
    const v = defaultVersionInfo();
    const release = opts.release ?? { major: Number(v.major), minor: Number(v.minor) };
    const disabled = new Set(opts.disabled);
    this.disabledMetrics.inc(disabled.size);
    for (const metric of this.registry.getMetricsAsArray()) {
      const { name, help } = metric as unknown as { name: string; help: string };
      if (!/^\[(ALPHA|BETA|STABLE|INTERNAL)\] /.test(help)) continue;
      const lifecycle = lifecycleOf(help);
      if (disabled.has(name) || (!opts.showHidden && deprecatedLongAgo(lifecycle, release))) {
        this.registry.removeSingleMetric(name);
        this.hiddenMetrics.inc();
        continue;
      }
      this.registeredMetrics.inc({ stability_level: lifecycle.stability, deprecated_version: lifecycle.deprecatedVersion ?? '' });
    }
  }

  /** kube's healthz handlers record each check they run */
  observeHealthcheck(name: string, type: string, ok: boolean): void {
    this.healthcheck.set({ name, type }, ok ? 1 : 0);
    this.healthchecksTotal.inc({ name, type, status: ok ? 'success' : 'error' });
  }
}

let shared: ApiserverMetrics | undefined;

/** the process-wide metrics (created on first use) */
export function defaultMetrics(): ApiserverMetrics {
  shared ??= new ApiserverMetrics();
  return shared;
}
