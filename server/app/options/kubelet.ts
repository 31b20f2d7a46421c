// How the server reaches kubelets (logs, exec, attach, port-forward, nodes/proxy).

import type { KapiConfig } from '../../config/flags.js';
import { checkKubeletFlags, type KubeletFlags } from '../../proxy/index.js';
import type { Problems } from './problems.js';

export function completeKubeletOptions(config: KapiConfig, problems: Problems): KubeletFlags {
  const values = config.values;
  const options: KubeletFlags = {
    clientCertificate: values.get('kubelet-client-certificate'),
    clientKey: values.get('kubelet-client-key'),
    certificateAuthority: values.get('kubelet-certificate-authority'),
    preferredAddressTypes: values.get('kubelet-preferred-address-types'),
    timeoutMs: values.get('kubelet-timeout'),
    allowLoopbackTargets: values.get('allow-loopback-proxy-targets'),
  };
  problems.check(() => checkKubeletFlags(options));
  return options;
}
