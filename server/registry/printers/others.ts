// Columns of networking, discovery, RBAC, coordination, storage, scheduling, certificates,
// admission, flow control, node and events.k8s.io resources, as kubectl shows them.

import type { KubeObject } from '../../../storage/interface.js';
import type { TableConvertor } from './table-convertor.js';
import { eventsConvertor, loadBalancerIngress, type EventView } from './core.js';
import {
  AGE,
  NAME,
  age,
  col,
  convertor,
  formatLabelSelector,
  get,
  humanDuration,
  int,
  list,
  listWithMore,
  nameOf,
  optInt,
  optStr,
  str,
  strings,
  wide,
} from './helpers.js';

function ingressHosts(obj: KubeObject): string {
  const rules = list(obj, 'spec.rules');
  const hosts: string[] = [];
  const max = 3;
  for (const r of rules) {
    if (hosts.length === max) break;
    if (typeof r.host === 'string' && r.host !== '') hosts.push(r.host);
  }
  if (hosts.length === 0) return '*';
  return rules.length > max && hosts.length === max ? `${hosts.join(',')} + ${rules.length - max} more...` : hosts.join(',');
}

export const ingresses = convertor(
  [
    NAME,
    col('Class', 'string', 'The IngressClass of the ingress.'),
    col('Hosts', 'string', 'Hosts the ingress rules match.'),
    col('Address', 'string', 'Where the load balancer of the ingress is reachable.'),
    col('Ports', 'string', 'Ports the ingress opens.'),
    AGE,
  ],
  (obj, now) => [
    nameOf(obj),
    optStr(obj, 'spec.ingressClassName') ?? '<none>',
    ingressHosts(obj),
    loadBalancerIngress(obj, 'status.loadBalancer.ingress'),
    list(obj, 'spec.tls').length > 0 ? '80, 443' : '80',
    age(obj, now),
  ],
);

export const ingressClasses = convertor(
  [
    NAME,
    col('Controller', 'string', 'The controller that handles this class.'),
    col('Parameters', 'string', 'A reference to the class parameters.'),
    AGE,
  ],
  (obj, now) => {
    const p = get(obj, 'spec.parameters');
    let params = '<none>';
    if (p) {
      const group = optStr(p, 'apiGroup');
      params = `${str(p, 'kind')}${group !== undefined ? `.${group}` : ''}/${str(p, 'name')}`;
    }
    return [nameOf(obj), str(obj, 'spec.controller'), params, age(obj, now)];
  },
);

export const networkPolicies = convertor([NAME, col('Pod-Selector', 'string', 'The pods the policy applies to.'), AGE], (obj, now) => [
  nameOf(obj),
  formatLabelSelector(get(obj, 'spec.podSelector') ?? {}),
  age(obj, now),
]);

export const endpointSlices = convertor(
  [
    NAME,
    col('AddressType', 'string', 'The type of the addresses.'),
    col('Ports', 'string', 'The ports of the endpoints.'),
    col('Endpoints', 'string', 'The addresses of the endpoints.'),
    AGE,
  ],
  (obj, now) => {
    const ports = list(obj, 'ports').map((p) => (typeof p.port === 'number' ? String(p.port) : typeof p.name === 'string' ? p.name : '*'));
    const addresses = list(obj, 'endpoints').flatMap((e) => strings(e, 'addresses'));
    return [nameOf(obj), str(obj, 'addressType'), listWithMore(ports, 3), listWithMore(addresses, 3), age(obj, now)];
  },
);

function subjects(obj: KubeObject): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of list(obj, 'subjects')) {
    const name = str(s, 'name');
    if (s.kind === 'User') users.push(name);
    else if (s.kind === 'Group') groups.push(name);
    else if (s.kind === 'ServiceAccount') sas.push(`${str(s, 'namespace')}/${name}`);
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

function bindings(kind: string): TableConvertor {
  return convertor(
    [
      NAME,
      col('Role', 'string', 'The role the binding grants.'),
      AGE,
      wide('Users', 'string', `Users in the ${kind}.`),
      wide('Groups', 'string', `Groups in the ${kind}.`),
      wide('ServiceAccounts', 'string', `ServiceAccounts in the ${kind}.`),
    ],
    (obj, now) => [nameOf(obj), `${str(obj, 'roleRef.kind')}/${str(obj, 'roleRef.name')}`, age(obj, now), ...subjects(obj)],
  );
}

export const leases = convertor([NAME, col('Holder', 'string', 'The identity of the lease holder.'), AGE], (obj, now) => [
  nameOf(obj),
  str(obj, 'spec.holderIdentity'),
  age(obj, now),
]);

export const leaseCandidates = convertor(
  [
    NAME,
    col('LeaseName', 'string', 'The lease the candidate runs for.'),
    col('BinaryVersion', 'string', 'The binary version of the candidate.'),
    col('EmulationVersion', 'string', 'The emulation version of the candidate.'),
    AGE,
  ],
  (obj, now) => [nameOf(obj), str(obj, 'spec.leaseName'), str(obj, 'spec.binaryVersion'), str(obj, 'spec.emulationVersion'), age(obj, now)],
);

function isDefaultClass(obj: KubeObject): boolean {
  const a = obj.metadata.annotations ?? {};
  return a['storageclass.kubernetes.io/is-default-class'] === 'true' || a['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
}

export const storageClasses = convertor(
  [
    NAME,
    col('Provisioner', 'string', 'The provisioner of volumes of this class.'),
    col('ReclaimPolicy', 'string', 'What happens to released volumes of this class.'),
    col('VolumeBindingMode', 'string', 'When volumes of this class are bound.'),
    col('AllowVolumeExpansion', 'string', 'Whether volumes of this class can grow.'),
    AGE,
  ],
  (obj, now) => [
    isDefaultClass(obj) ? `${nameOf(obj)} (default)` : nameOf(obj),
    str(obj, 'provisioner'),
    optStr(obj, 'reclaimPolicy') ?? 'Delete',
    optStr(obj, 'volumeBindingMode') ?? 'Immediate',
    get(obj, 'allowVolumeExpansion') === true,
    age(obj, now),
  ],
);

export const volumeAttachments = convertor(
  [
    NAME,
    col('Attacher', 'string', 'The attacher of the volume.', { format: 'name' }),
    col('PV', 'string', 'The persistent volume attached.'),
    col('Node', 'string', 'The node the volume is attached to.'),
    col('Attached', 'boolean', 'Whether the volume is attached.'),
    AGE,
  ],
  (obj, now) => [
    nameOf(obj),
    str(obj, 'spec.attacher'),
    str(obj, 'spec.source.persistentVolumeName'),
    str(obj, 'spec.nodeName'),
    get(obj, 'status.attached') === true,
    age(obj, now),
  ],
);

export const csiNodes = convertor(
  [NAME, col('Drivers', 'integer', 'The number of CSI drivers registered on the node.'), AGE],
  (obj, now) => [nameOf(obj), list(obj, 'spec.drivers').length, age(obj, now)],
);

export const csiDrivers = convertor(
  [
    NAME,
    col('AttachRequired', 'boolean', 'Whether volumes need an attach step.'),
    col('PodInfoOnMount', 'boolean', 'Whether pod information is passed on mount.'),
    col('StorageCapacity', 'boolean', 'Whether the driver reports storage capacity.'),
    col('TokenRequests', 'string', 'Audiences of service account tokens passed to the driver.'),
    col('RequiresRepublish', 'boolean', 'Whether volumes are periodically republished.'),
    col('Modes', 'string', 'The volume lifecycle modes supported.'),
    AGE,
  ],
  (obj, now) => {
    const tokenRequests = get(obj, 'spec.tokenRequests');
    const modes = strings(obj, 'spec.volumeLifecycleModes').join(',');
    return [
      nameOf(obj),
      get(obj, 'spec.attachRequired') !== false,
      get(obj, 'spec.podInfoOnMount') === true,
      get(obj, 'spec.storageCapacity') === true,
      Array.isArray(tokenRequests)
        ? list(obj, 'spec.tokenRequests')
            .map((t) => str(t, 'audience'))
            .join(',')
        : '<unset>',
      get(obj, 'spec.requiresRepublish') === true,
      modes || '<none>',
      age(obj, now),
    ];
  },
);

export const priorityClasses = convertor(
  [
    NAME,
    col('Value', 'integer', 'The priority value.'),
    col('Global-Default', 'boolean', 'Whether this is the default priority class.'),
    AGE,
    wide('PreemptionPolicy', 'string', 'Whether pods of this class may preempt others.'),
  ],
  (obj, now) => [nameOf(obj), int(obj, 'value'), get(obj, 'globalDefault') === true, age(obj, now), str(obj, 'preemptionPolicy')],
);

export const runtimeClasses = convertor([NAME, col('Handler', 'string', 'The container runtime handler.'), AGE], (obj, now) => [
  nameOf(obj),
  str(obj, 'handler'),
  age(obj, now),
]);

function csrStatus(obj: KubeObject): string {
  const types = new Set(list(obj, 'status.conditions').map((c) => c.type));
  let status = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) status += ',Failed';
  if (str(obj, 'status.certificate') !== '') status += ',Issued';
  return status;
}

export const certificateSigningRequests = convertor(
  [
    NAME,
    AGE,
    col('SignerName', 'string', 'The signer asked to sign the certificate.'),
    col('Requestor', 'string', 'The user who requested the certificate.'),
    col('RequestedDuration', 'string', 'The requested validity of the certificate.'),
    col('Condition', 'string', 'Approval and issuance state.'),
  ],
  (obj, now) => {
    const seconds = optInt(obj, 'spec.expirationSeconds');
    return [
      nameOf(obj),
      age(obj, now),
      str(obj, 'spec.signerName') || '<none>',
      str(obj, 'spec.username'),
      seconds === undefined ? '<none>' : humanDuration(seconds * 1000),
      csrStatus(obj),
    ];
  },
);

export const clusterTrustBundles = convertor([NAME, col('SignerName', 'string', 'The signer of the bundle.')], (obj) => [
  nameOf(obj),
  str(obj, 'spec.signerName') || '<none>',
]);

function webhooks(): TableConvertor {
  return convertor([NAME, col('Webhooks', 'integer', 'The number of webhooks in this configuration.'), AGE], (obj, now) => [
    nameOf(obj),
    list(obj, 'webhooks').length,
    age(obj, now),
  ]);
}

function admissionPolicies(countPath: string, countName: string): TableConvertor {
  return convertor(
    [
      NAME,
      col(countName, 'integer', `The number of ${countName.toLowerCase()} in this policy.`),
      col('ParamKind', 'string', 'The kind of the policy parameters.'),
      AGE,
    ],
    (obj, now) => {
      const pk = get(obj, 'spec.paramKind');
      return [nameOf(obj), list(obj, countPath).length, pk ? `${str(pk, 'apiVersion')}/${str(pk, 'kind')}` : '<unset>', age(obj, now)];
    },
  );
}

function policyBindings(): TableConvertor {
  return convertor(
    [
      NAME,
      col('PolicyName', 'string', 'The policy this binding applies.'),
      col('ParamRef', 'string', 'The parameters of the binding.'),
      AGE,
    ],
    (obj, now) => {
      const pr = get(obj, 'spec.paramRef');
      let param = '<unset>';
      if (pr) {
        const name = str(pr, 'name');
        if (name) param = str(pr, 'namespace') ? `${str(pr, 'namespace')}/${name}` : `*/${name}`;
        else if (get(pr, 'selector')) param = formatLabelSelector(get(pr, 'selector'));
      }
      return [nameOf(obj), str(obj, 'spec.policyName'), param, age(obj, now)];
    },
  );
}

export const flowSchemas = convertor(
  [
    NAME,
    col('PriorityLevel', 'string', 'The priority level of matching requests.'),
    col('MatchingPrecedence', 'string', 'The order among flow schemas.'),
    col('DistinguisherMethod', 'string', 'How flows are told apart.'),
    AGE,
    col('MissingPL', 'string', 'Whether the priority level is missing.'),
  ],
  (obj, now) => {
    const dangling = list(obj, 'status.conditions').find((c) => c.type === 'Dangling');
    return [
      nameOf(obj),
      str(obj, 'spec.priorityLevelConfiguration.name'),
      int(obj, 'spec.matchingPrecedence'),
      optStr(obj, 'spec.distinguisherMethod.type') ?? '<none>',
      age(obj, now),
      dangling ? String(dangling.status ?? '') : '?',
    ];
  },
);

export const priorityLevels = convertor(
  [
    NAME,
    col('Type', 'string', 'Limited or Exempt.'),
    col('NominalConcurrencyShares', 'string', 'The share of server concurrency.'),
    col('Queues', 'string', 'The number of queues.'),
    col('HandSize', 'string', 'Queues considered per flow.'),
    col('QueueLengthLimit', 'string', 'Requests per queue.'),
    AGE,
  ],
  (obj, now) => {
    const limited = get(obj, 'spec.limited');
    const queuing = limited ? get(limited, 'limitResponse.queuing') : undefined;
    return [
      nameOf(obj),
      str(obj, 'spec.type'),
      limited ? (optInt(limited, 'nominalConcurrencyShares') ?? 0) : '<none>',
      queuing ? int(queuing, 'queues') : '<none>',
      queuing ? int(queuing, 'handSize') : '<none>',
      queuing ? int(queuing, 'queueLengthLimit') : '<none>',
      age(obj, now),
    ];
  },
);

export const apiServices = convertor(
  [
    NAME,
    col('Service', 'string', 'The service that serves this API, or Local.'),
    col('Available', 'string', 'Whether the API is available.'),
    AGE,
  ],
  (obj, now) => {
    const svc = get(obj, 'spec.service');
    const service = svc ? `${str(svc, 'namespace')}/${str(svc, 'name')}` : 'Local';
    const available = list(obj, 'status.conditions').find((c) => c.type === 'Available');
    let availableText = 'Unknown';
    if (available) {
      availableText = String(available.status ?? 'Unknown');
      if (available.status !== 'True' && typeof available.reason === 'string' && available.reason) {
        availableText = `${availableText} (${available.reason})`;
      }
    }
    return [nameOf(obj), service, availableText, age(obj, now)];
  },
);

export const serviceCIDRs = convertor([NAME, col('CIDRs', 'string', 'The IP ranges of services.'), AGE], (obj, now) => [
  nameOf(obj),
  strings(obj, 'spec.cidrs').join(','),
  age(obj, now),
]);

export const ipAddresses = convertor([NAME, col('ParentRef', 'string', 'The object the address is allocated to.')], (obj) => {
  const p = get(obj, 'spec.parentRef');
  let parent = '<none>';
  if (p) {
    const group = str(p, 'group');
    const gr = group ? `${str(p, 'resource')}.${group}` : str(p, 'resource');
    parent = gr.toLowerCase() + (str(p, 'namespace') ? `/${str(p, 'namespace')}` : '') + `/${str(p, 'name')}`;
  }
  return [nameOf(obj), parent];
});

function eventsV1View(obj: KubeObject): EventView {
  const series = get(obj, 'series');
  return {
    firstTimestamp: optStr(obj, 'deprecatedFirstTimestamp'),
    lastTimestamp: optStr(obj, 'deprecatedLastTimestamp'),
    eventTime: optStr(obj, 'eventTime'),
    count: int(obj, 'deprecatedCount'),
    seriesCount: series ? int(series, 'count') : undefined,
    seriesLastObserved: series ? optStr(series, 'lastObservedTime') : undefined,
    type: str(obj, 'type'),
    reason: str(obj, 'reason'),
    kind: str(obj, 'regarding.kind'),
    name: str(obj, 'regarding.name'),
    fieldPath: str(obj, 'regarding.fieldPath'),
    component: str(obj, 'deprecatedSource.component') || str(obj, 'reportingController'),
    host: str(obj, 'deprecatedSource.host') || str(obj, 'reportingInstance'),
    message: str(obj, 'note'),
  };
}

export const roleBindings = bindings('roleBinding');
export const clusterRoleBindings = bindings('clusterRoleBinding');
export const validatingWebhookConfigurations = webhooks();
export const mutatingWebhookConfigurations = webhooks();
export const validatingAdmissionPolicies = admissionPolicies('spec.validations', 'Validations');
export const validatingAdmissionPolicyBindings = policyBindings();
export const mutatingAdmissionPolicies = admissionPolicies('spec.mutations', 'Mutations');
export const mutatingAdmissionPolicyBindings = policyBindings();
/** events.k8s.io/v1 Events */
export const eventsV1 = eventsConvertor(eventsV1View);
