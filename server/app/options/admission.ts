// The admission plugins to run and their configuration file.

import type { KapiConfig } from '../../config/flags.js';
import { admissionFlagsOf } from '../../admission/chain.js';
import { validateAdmissionFlags, type AdmissionFlags } from '../../admission/config.js';
import type { Problems } from './problems.js';

export interface AdmissionOptions {
  flags: AdmissionFlags;
  /** --admission-control-config-file ('' for none) */
  configFile: string;
}

export function completeAdmissionOptions(config: KapiConfig, problems: Problems): AdmissionOptions {
  const flags = admissionFlagsOf(config.values);
  // bad plugin names fail before anything starts, as kube's option validation does
  problems.add(...validateAdmissionFlags(flags));
  return { flags, configFile: config.values.get('admission-control-config-file') };
}
