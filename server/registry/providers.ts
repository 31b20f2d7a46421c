// The one place the API groups' providers are collected, and the descriptor of a resource
// looked up by its group and resource. Adding a built-in resource is adding its descriptor to
// its group's provider; this module does not compile while a resource of the generated
// catalog has none.

import type { ResourceKey } from '../apis/generated/resource-keys.js';
import type { ResourceInfo } from '../apis/types.js';
import { admissionRegistrationProvider } from './admissionregistration/provider.js';
import { apiExtensionsProvider } from './apiextensions/provider.js';
import { apiRegistrationProvider } from './apiregistration/provider.js';
import { appsProvider } from './apps/provider.js';
import { authenticationProvider } from './authentication/provider.js';
import { authorizationProvider } from './authorization/provider.js';
import { autoscalingProvider } from './autoscaling/provider.js';
import { batchProvider } from './batch/provider.js';
import { certificatesProvider } from './certificates/provider.js';
import { coordinationProvider } from './coordination/provider.js';
import { coreProvider } from './core/provider.js';
import type { GroupProvider, ResourceDescriptor } from './descriptor.js';
import { discoveryProvider } from './discovery/provider.js';
import { eventsProvider } from './events/provider.js';
import { flowControlProvider } from './flowcontrol/provider.js';
import { internalProvider } from './internal/provider.js';
import { networkingProvider } from './networking/provider.js';
import { nodeProvider } from './node/provider.js';
import { policyProvider } from './policy/provider.js';
import { defaultTableConvertor } from './printers/index.js';
import type { TableConvertor } from './printers/table-convertor.js';
import { scaleConvertor } from './printers/workloads.js';
import { rbacProvider } from './rbac/provider.js';
import { resourceProvider } from './resource/provider.js';
import { schedulingProvider } from './scheduling/provider.js';
import { storageProvider } from './storage/provider.js';
import { storageMigrationProvider } from './storagemigration/provider.js';

const providers = [
  coreProvider,
  admissionRegistrationProvider,
  apiExtensionsProvider,
  apiRegistrationProvider,
  appsProvider,
  authenticationProvider,
  authorizationProvider,
  autoscalingProvider,
  batchProvider,
  certificatesProvider,
  coordinationProvider,
  discoveryProvider,
  eventsProvider,
  flowControlProvider,
  internalProvider,
  networkingProvider,
  nodeProvider,
  policyProvider,
  rbacProvider,
  resourceProvider,
  schedulingProvider,
  storageProvider,
  storageMigrationProvider,
] as const;

type Described = (typeof providers)[number]['resources'][number]['key'];
type Undescribed = Exclude<ResourceKey, Described>;
/** names the resources of the catalog without a descriptor, in the compiler's error */
const everyResourceDescribed: [Undescribed] extends [never] ? true : { missingDescriptors: Undescribed } = true;
void everyResourceDescribed;

/** every API group's provider */
export const groupProviders: readonly GroupProvider[] = providers;

/** descriptors by `<group>/<resource>`; a key described twice is refused */
export class DescriptorIndex {
  private readonly byKey = new Map<string, ResourceDescriptor>();

  constructor(providers: readonly GroupProvider[]) {
    for (const p of providers) {
      for (const d of p.resources) {
        if (this.byKey.has(d.key)) throw new Error(`two descriptors for ${d.key}`);
        this.byKey.set(d.key, d);
      }
    }
  }

  /** the descriptor of a resource; undefined for one that is not built in (a custom resource) */
  find(info: Pick<ResourceInfo, 'group' | 'resource'>): ResourceDescriptor | undefined {
    return this.byKey.get(`${info.group}/${info.resource}`);
  }

  /** the descriptor of a resource the registry serves as a built-in; throws without one */
  require(info: Pick<ResourceInfo, 'group' | 'resource'>): ResourceDescriptor {
    const d = this.find(info);
    if (!d) throw new Error(`no descriptor for the resource ${info.group}/${info.resource}: add one to its group's provider`);
    return d;
  }
}

let builtin: DescriptorIndex | undefined;

/** the built-in resources' descriptors (built on first use: providers import modules that
 *  import this one's users) */
export function builtinDescriptors(): DescriptorIndex {
  builtin ??= new DescriptorIndex(groupProviders);
  return builtin;
}

/** the Table convertor of a resource (and subresource: `scale` has its own); a resource
 *  whose descriptor names none, or that has no descriptor (a custom resource), shows Name
 *  and Created At */
export function tableConvertorFor(info: Pick<ResourceInfo, 'group' | 'resource'>, subresource?: string): TableConvertor {
  if (subresource === 'scale') return scaleConvertor;
  return builtinDescriptors().find(info)?.table ?? defaultTableConvertor;
}
