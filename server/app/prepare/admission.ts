// The admission chain: the enabled plugins in kube's order; each request gets the chain's hooks.

import { buildAdmissionChain, type AdmissionChain } from '../../admission/chain.js';
import { PLUGIN_FACTORIES } from '../../admission/plugins.js';
import type { Authorization } from '../../authz/index.js';
import type { ResourceResolver } from '../../registry/rest.js';
import { createLogger } from '../../log.js';
import type { CompletedConfig } from '../config.js';
import type { StopStack } from '../lifecycle.js';

const log = createLogger('kapi');

export function startAdmission(
  config: CompletedConfig,
  resolver: ResourceResolver,
  authz: Authorization,
  stack: StopStack,
): Promise<AdmissionChain> {
  const admissionStop = new AbortController();
  stack.push('admission', () => admissionStop.abort());
  const admissionLog = log.named('admission');
  return buildAdmissionChain({
    flags: config.admission.flags,
    configFile: config.admission.configFile,
    factories: PLUGIN_FACTORIES,
    deps: {
      // custom resources too: webhooks and policies match them, params may be custom objects
      resolver,
      signal: admissionStop.signal,
      featureGates: config.featureGates.toRecord(),
      log: (level, message, fields) => admissionLog[level](message, fields as Parameters<typeof admissionLog.info>[1]),
      authorizer: authz.reviews,
      flag: (name) => config.subsystemFlags.values.get(name),
    },
  });
}
