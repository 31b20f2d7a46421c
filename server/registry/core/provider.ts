// The core group's (`/api/v1`) resources.

import { fieldCount, fieldLabels, fieldObject, fieldText, type ObjectFields } from '../../selectors/field-sets.js';
import { genericStrategy, groupProvider, type DescriptorContext } from '../descriptor.js';
import * as columns from '../printers/core.js';
import { keyPrefixFor } from '../keys.js';
import type { ResourceStrategy } from '../strategy.js';
import { PodBindingResource } from './binding.js';
import { configMapStrategy, secretStrategy } from './config.js';
import { eventStrategy } from './events.js';
import { PodEvictionResource } from './eviction.js';
import { endpointsStrategy, limitRangeStrategy, podTemplateStrategy, resourceQuotaStrategy, serviceAccountStrategy } from './misc.js';
import { namespaceFinalizeStrategy, namespaceStatusStrategy, namespaceStrategy, NamespaceStore } from './namespaces.js';
import { nodeStatusStrategy, nodeStrategy, replicationControllerStrategy } from './others.js';
import { podEphemeralContainersStrategy, podResizeStrategy } from './pod-subresources.js';
import { podStatusStrategy, podStrategy } from './pods.js';
import { ServiceAccountTokenResource } from './serviceaccount-token.js';
import { serviceStatusStrategy, serviceStrategy } from './services.js';
import { persistentVolumeClaimStrategy, persistentVolumeStrategy } from './volumes.js';
import { GenericStore, type StoreVerb } from '../store.js';
import { errors } from '../../machinery/status.js';

const readUpdate: ReadonlySet<StoreVerb> = new Set(['get', 'update']);
const updateOnly: ReadonlySet<StoreVerb> = new Set(['update']);

/** Events, with the etcd lease --event-ttl gives them; events.k8s.io stores the same objects */
export function eventStrategyOf({ options }: DescriptorContext): ResourceStrategy {
  const strategy = eventStrategy();
  return options.eventTTLSeconds === undefined ? strategy : { ...strategy, ttlSeconds: options.eventTTLSeconds };
}

/** a stored core Event's selectable fields (events.k8s.io Events are matched on these too) */
export const coreEventFields: ObjectFields = (o) => {
  const io = fieldObject(o.involvedObject);
  return {
    'involvedObject.kind': fieldText(io.kind),
    'involvedObject.namespace': fieldText(io.namespace),
    'involvedObject.name': fieldText(io.name),
    'involvedObject.uid': fieldText(io.uid),
    'involvedObject.apiVersion': fieldText(io.apiVersion),
    'involvedObject.resourceVersion': fieldText(io.resourceVersion),
    'involvedObject.fieldPath': fieldText(io.fieldPath),
    reason: fieldText(o.reason),
    reportingComponent: fieldText(o.reportingComponent),
    source: fieldText(fieldObject(o.source).component),
    type: fieldText(o.type),
  };
};

export const coreProvider = groupProvider('', [
  // stored as plain kinds (kube binds the pod on a Binding, and probes components)
  { key: '/bindings', strategy: genericStrategy() },
  { key: '/componentstatuses', strategy: genericStrategy(), table: columns.componentStatuses },
  { key: '/configmaps', strategy: configMapStrategy, table: columns.configMaps },
  { key: '/endpoints', strategy: endpointsStrategy, table: columns.endpoints },
  {
    key: '/events',
    strategy: eventStrategyOf,
    kubeFinalizerNames: false,
    fieldLabels: fieldLabels([
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
      'metadata.namespace',
      'metadata.name',
    ]),
    selectableFields: coreEventFields,
    table: columns.coreEvents,
  },
  { key: '/limitranges', strategy: limitRangeStrategy },
  {
    key: '/namespaces',
    strategy: namespaceStrategy,
    statusStrategy: namespaceStatusStrategy,
    fieldLabels: fieldLabels(['status.phase', 'metadata.name']),
    selectableFields: (o) => ({ 'status.phase': fieldText(fieldObject(o.status).phase) }),
    table: columns.namespaces,
    store: (config) => new NamespaceStore(config),
    subresources: {
      finalize: ({ config, strategy }) =>
        new GenericStore({ ...config, subresource: 'finalize', strategy: namespaceFinalizeStrategy(strategy), verbs: updateOnly }),
    },
  },
  {
    key: '/nodes',
    strategy: nodeStrategy,
    statusStrategy: nodeStatusStrategy,
    fieldLabels: fieldLabels(['metadata.name', 'spec.unschedulable']),
    selectableFields: (o) => ({ 'spec.unschedulable': fieldObject(o.spec).unschedulable === true ? 'true' : 'false' }),
    table: columns.nodes,
  },
  { key: '/persistentvolumeclaims', strategy: persistentVolumeClaimStrategy, table: columns.persistentVolumeClaims },
  { key: '/persistentvolumes', strategy: persistentVolumeStrategy, table: columns.persistentVolumes },
  {
    key: '/pods',
    strategy: podStrategy,
    statusStrategy: podStatusStrategy,
    fieldLabels: fieldLabels(
      [
        'metadata.name',
        'metadata.namespace',
        'spec.nodeName',
        'spec.restartPolicy',
        'spec.schedulerName',
        'spec.serviceAccountName',
        'spec.hostNetwork',
        'status.phase',
        'status.podIP',
        'status.podIPs',
        'status.nominatedNodeName',
      ],
      // old v1 clients send spec.host
      { 'spec.host': 'spec.nodeName' },
    ),
    selectableFields: (o) => {
      const spec = fieldObject(o.spec);
      const status = fieldObject(o.status);
      const ips = Array.isArray(status.podIPs) ? status.podIPs : [];
      return {
        'spec.nodeName': fieldText(spec.nodeName),
        'spec.restartPolicy': fieldText(spec.restartPolicy),
        'spec.schedulerName': fieldText(spec.schedulerName),
        'spec.serviceAccountName': fieldText(spec.serviceAccountName),
        'spec.hostNetwork': spec.hostNetwork === true ? 'true' : 'false',
        'status.phase': fieldText(status.phase),
        'status.podIP': ips.length ? fieldText(fieldObject(ips[0]).ip) : '',
        'status.nominatedNodeName': fieldText(status.nominatedNodeName),
      };
    },
    table: columns.pods,
    subresources: {
      binding: ({ main }) => new PodBindingResource(main),
      eviction: ({ main, resources, storageFor }) => {
        const pdb = resources.find((r) => r.group === 'policy' && r.resource === 'poddisruptionbudgets');
        return new PodEvictionResource(main, pdb ? storageFor(keyPrefixFor(pdb)) : undefined, pdb ? keyPrefixFor(pdb) : undefined);
      },
      ephemeralcontainers: ({ config, strategy }) =>
        new GenericStore({
          ...config,
          subresource: 'ephemeralcontainers',
          strategy: podEphemeralContainersStrategy(strategy),
          verbs: readUpdate,
        }),
      resize: ({ config, strategy }) =>
        new GenericStore({ ...config, subresource: 'resize', strategy: podResizeStrategy(strategy), verbs: readUpdate }),
    },
  },
  { key: '/podtemplates', strategy: podTemplateStrategy, table: columns.podTemplates },
  {
    key: '/replicationcontrollers',
    strategy: replicationControllerStrategy,
    fieldLabels: fieldLabels(['metadata.name', 'metadata.namespace', 'status.replicas']),
    selectableFields: (o) => ({ 'status.replicas': fieldCount(fieldObject(o.status).replicas) }),
    table: columns.replicationControllers,
  },
  { key: '/resourcequotas', strategy: resourceQuotaStrategy, table: columns.resourceQuotas },
  {
    key: '/secrets',
    strategy: secretStrategy,
    fieldLabels: fieldLabels(['type', 'metadata.namespace', 'metadata.name']),
    selectableFields: (o) => ({ type: fieldText(o.type) }),
    table: columns.secrets,
  },
  {
    key: '/serviceaccounts',
    strategy: serviceAccountStrategy,
    table: columns.serviceAccounts,
    subresources: {
      token: ({ info, options, handler }) => {
        if (!options.serviceAccountTokens) return undefined;
        return new ServiceAccountTokenResource(
          info,
          (ctx, resource, name) => {
            const store = handler('', 'v1', resource);
            if (!store) throw errors.notFound({ group: '', resource, name });
            return store.get({ ...ctx, namespace: resource === 'nodes' ? '' : ctx.namespace }, name, {});
          },
          options.serviceAccountTokens,
        );
      },
    },
  },
  {
    key: '/services',
    strategy: ({ options }) => serviceStrategy(options.serviceIPAllocator),
    statusStrategy: serviceStatusStrategy,
    fieldLabels: fieldLabels(['metadata.namespace', 'metadata.name', 'spec.clusterIP', 'spec.type']),
    selectableFields: (o) => ({
      'spec.clusterIP': fieldText(fieldObject(o.spec).clusterIP),
      'spec.type': fieldText(fieldObject(o.spec).type),
    }),
    table: columns.services,
  },
]);
