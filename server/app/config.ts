// The completed configuration: every subsystem's options read from the flags, validated
// (all problems reported together, before anything starts) and completed with what follows
// from them. The phases after this (build, prepare, run) read options, never flags.

import type { WorkerRole } from '../workers/role.js';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { KapiConfig } from '../config/flags.js';
import type { FeatureGates } from '../features/gates.js';
import type { FlagValue } from '../machinery/flagset.js';
import type { KubeletFlags } from '../proxy/index.js';
import type { ControllerOptions } from '../controllers/index.js';
import type { PkiOptions } from '../pki/pki.js';
import { Problems } from './options/problems.js';
import { completeStorageOptions, type StorageOptions } from './options/storage.js';
import { completeApiOptions, type ApiOptions } from './options/api.js';
import { completeAdmissionOptions, type AdmissionOptions } from './options/admission.js';
import { completeAggregatorOptions, type AggregatorOptions } from './options/aggregator.js';
import { completeKubeletOptions } from './options/kubelet.js';
import { completeMetricsOptions, type MetricsOptions } from './options/metrics.js';
import { completeControllerOptions } from './options/controllers.js';
import { completeServingOptions, type ServingOptions } from './options/serving.js';
import { completeFlowControlOptions, type FlowControlOptions } from './options/flow-control.js';

/** the flags of the subsystems that read their own (authentication, authorization, audit, TLS) */
export interface SubsystemFlags {
  values: ReadonlyMap<string, FlagValue>;
  explicitlySet: ReadonlySet<string>;
}

export interface CompletedConfig {
  /** the command line this was completed from */
  readonly source: KapiConfig;
  /** this replica's identity (leader election, lease holder) */
  readonly identity: string;
  readonly featureGates: FeatureGates;
  readonly subsystemFlags: SubsystemFlags;
  readonly pki: PkiOptions;
  readonly storage: StorageOptions;
  readonly api: ApiOptions;
  readonly admission: AdmissionOptions;
  readonly aggregator: AggregatorOptions;
  readonly kubelet: KubeletFlags;
  readonly metrics: MetricsOptions;
  readonly controllers: Required<Omit<ControllerOptions, 'rootCaPem'>>;
  readonly serving: ServingOptions;
  readonly flowControl: FlowControlOptions;
  /** set when this process is one worker of a --workers replica (its primary did the one-time work) */
  readonly worker?: WorkerRole;
}

/** Throws InvalidOptionsError (kube's texts) when any option is invalid. */
export function completeConfig(config: KapiConfig, worker?: WorkerRole): CompletedConfig {
  const problems = new Problems();
  const admission = completeAdmissionOptions(config, problems);
  const api = completeApiOptions(config, problems);
  const storage = completeStorageOptions(config, problems);
  const aggregator = completeAggregatorOptions(config, problems);
  const kubelet = completeKubeletOptions(config, problems);
  problems.throwIfAny();
  return {
    source: config,
    worker,
    identity: `kapi-${os.hostname()}-${randomUUID()}`,
    featureGates: config.featureGates,
    subsystemFlags: { values: config.rawValues, explicitlySet: config.explicitlySet },
    pki: {
      certDir: config.serving.certDir,
      tlsCertFile: config.serving.tlsCertFile,
      tlsPrivateKeyFile: config.serving.tlsPrivateKeyFile,
      clientCaFile: config.serving.clientCaFile,
      advertiseAddress: config.serving.advertiseAddress,
      bindAddress: config.serving.bindAddress,
      kubernetesServiceIP: config.kubernetesServiceIP,
      extraSans: config.serving.extraSans,
    },
    storage,
    // no problems means the catalog loaded
    api: api!,
    admission,
    aggregator,
    kubelet,
    metrics: completeMetricsOptions(config),
    controllers: completeControllerOptions(config),
    serving: completeServingOptions(config),
    flowControl: completeFlowControlOptions(config),
  };
}
