// NamespaceLifecycle. kapi's registry already does all of it, at the same point in the write
// path (server/registry/namespace-lifecycle.ts: no new objects in a missing or terminating
// namespace; server/registry/core/namespaces.ts: default, kube-system and kube-public cannot
// be deleted). The plugin is registered so that the flags accept its name; it adds no checks
// of its own, and disabling it does not turn the registry's checks off.

import type { AdmissionPluginFactory } from './plugin.js';

export const namespaceLifecycleFactory: AdmissionPluginFactory = {
  name: 'NamespaceLifecycle',
  create: () => ({ name: 'NamespaceLifecycle' }),
};
