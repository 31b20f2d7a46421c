// admin.kubeconfig in the data dir: the local URL, kapi's CA and the generated admin client
// certificate. Written only when the client CA is kapi's own (otherwise there is no admin key).

import path from 'node:path';
import { localServerURL, writeKubeconfig } from '../../kubeconfig/kubeconfig.js';
import type { Pki } from '../../pki/pki.js';

export interface LocalAccess {
  /** the URL a client on this machine reaches the server at */
  url: string;
  /** where admin.kubeconfig was written; undefined when the client CA is not kapi's */
  kubeconfigPath?: string;
}

export function writeAdminKubeconfig(pki: Pki, dataDir: string, bindAddress: string, securePort: number, write = true): LocalAccess {
  const url = localServerURL(bindAddress, securePort);
  if (!pki.admin) return { url };
  const kubeconfigPath = path.join(dataDir, 'admin.kubeconfig');
  if (write)
    writeKubeconfig(kubeconfigPath, {
      server: url,
      caPem: pki.servingCaPem,
      clientCertPem: pki.admin.certPem,
      clientKeyPem: pki.admin.keyPem,
    });
  return { url, kubeconfigPath };
}
