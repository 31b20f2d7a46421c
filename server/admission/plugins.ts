// Every admission plugin kapi implements, by kube-apiserver's name. The chain (./chain.ts)
// picks the enabled ones and runs them in kube's order (./order.ts). A plugin named on the
// command line that is not here is a start-up error, as an unknown plugin is for kube.
// Add a plugin with one import and one entry below.

import type { AdmissionPluginFactory } from './plugin.js';

export const PLUGIN_FACTORIES: readonly AdmissionPluginFactory[] = [
];
