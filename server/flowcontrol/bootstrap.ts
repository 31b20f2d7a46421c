// The FlowSchemas and PriorityLevelConfigurations kube-apiserver 1.33 keeps in every cluster
// (flowcontrol.apiserver.k8s.io/v1): the mandatory exempt and catch-all pairs, and the
// suggested set. Fields are written in the order kube-apiserver serializes them.

import type { KubeObject } from '../../storage/interface.js';

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.k8s.io';
export const FLOWCONTROL_VERSION = 'v1';
export const AUTOUPDATE_SPEC_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';

export const EXEMPT = 'exempt';
export const CATCH_ALL = 'catch-all';

type Json = Record<string, unknown>;

function priorityLevel(name: string, spec: Json): KubeObject {
  return {
    apiVersion: `${FLOWCONTROL_GROUP}/${FLOWCONTROL_VERSION}`,
    kind: 'PriorityLevelConfiguration',
    metadata: { name, annotations: { [AUTOUPDATE_SPEC_ANNOTATION]: 'true' } },
    spec,
  };
}

function queued(shares: number, lendable: number, queues: number, handSize: number): Json {
  return {
    type: 'Limited',
    limited: {
      nominalConcurrencyShares: shares,
      limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit: 50 } },
      lendablePercent: lendable,
    },
  };
}

interface RuleSpec {
  subjects: Json[];
  resourceRules?: Json[];
  nonResourceRules?: Json[];
}

function flowSchema(
  name: string,
  level: string,
  precedence: number,
  distinguisher: 'ByUser' | 'ByNamespace' | undefined,
  rule: RuleSpec,
): KubeObject {
  const spec: Json = { priorityLevelConfiguration: { name: level }, matchingPrecedence: precedence };
  if (distinguisher) spec.distinguisherMethod = { type: distinguisher };
  const r: Json = { subjects: rule.subjects };
  if (rule.resourceRules) r.resourceRules = rule.resourceRules;
  if (rule.nonResourceRules) r.nonResourceRules = rule.nonResourceRules;
  spec.rules = [r];
  return {
    apiVersion: `${FLOWCONTROL_GROUP}/${FLOWCONTROL_VERSION}`,
    kind: 'FlowSchema',
    metadata: { name, annotations: { [AUTOUPDATE_SPEC_ANNOTATION]: 'true' } },
    spec,
  };
}

const groups = (...names: string[]): Json[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]): Json[] => names.map((name) => ({ kind: 'User', user: { name } }));
const kubeSystemSAs = (...names: string[]): Json[] =>
  names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } }));

function resourceRule(verbs: string[], apiGroups: string[], resources: string[], clusterScope: boolean): Json {
  const r: Json = { verbs, apiGroups, resources };
  if (clusterScope) r.clusterScope = true;
  r.namespaces = ['*'];
  return r;
}
const everything = (): Json[] => [resourceRule(['*'], ['*'], ['*'], true)];
const everyURL = (): Json[] => [{ verbs: ['*'], nonResourceURLs: ['*'] }];

const KCM = 'system:kube-controller-manager';
const SCHEDULER = 'system:kube-scheduler';

export function mandatoryPriorityLevels(): KubeObject[] {
  return [
    priorityLevel(CATCH_ALL, {
      type: 'Limited',
      limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' }, lendablePercent: 0 },
    }),
    priorityLevel(EXEMPT, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
  ];
}

export function mandatoryFlowSchemas(): KubeObject[] {
  return [
    flowSchema(EXEMPT, EXEMPT, 1, undefined, {
      subjects: groups('system:masters'),
      resourceRules: everything(),
      nonResourceRules: everyURL(),
    }),
    flowSchema(CATCH_ALL, CATCH_ALL, 10000, 'ByUser', {
      subjects: groups('system:unauthenticated', 'system:authenticated'),
      resourceRules: everything(),
      nonResourceRules: everyURL(),
    }),
  ];
}

export function suggestedPriorityLevels(): KubeObject[] {
  return [
    priorityLevel('system', queued(30, 33, 64, 6)),
    priorityLevel('node-high', queued(40, 25, 64, 6)),
    priorityLevel('leader-election', queued(10, 0, 16, 4)),
    priorityLevel('workload-high', queued(40, 50, 128, 6)),
    priorityLevel('workload-low', queued(100, 90, 128, 6)),
    priorityLevel('global-default', queued(20, 50, 128, 6)),
  ];
}

export function suggestedFlowSchemas(): KubeObject[] {
  const all = (subjects: Json[]): RuleSpec => ({ subjects, resourceRules: everything(), nonResourceRules: everyURL() });
  return [
    flowSchema('system-nodes', 'system', 500, 'ByUser', all(groups('system:nodes'))),
    flowSchema('system-node-high', 'node-high', 400, 'ByUser', {
      subjects: groups('system:nodes'),
      resourceRules: [
        resourceRule(['*'], [''], ['nodes', 'nodes/status'], true),
        resourceRule(['*'], ['coordination.k8s.io'], ['leases'], false),
      ],
    }),
    flowSchema('probes', EXEMPT, 2, undefined, {
      subjects: groups('system:unauthenticated', 'system:authenticated'),
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
    }),
    flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', {
      subjects: [...users(KCM, SCHEDULER), ...kubeSystemSAs('*')],
      resourceRules: [resourceRule(['get', 'create', 'update'], ['coordination.k8s.io'], ['leases'], false)],
    }),
    flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', {
      subjects: kubeSystemSAs('*'),
      resourceRules: [
        resourceRule(['get', 'create', 'update'], [''], ['endpoints', 'configmaps'], false),
        resourceRule(['get', 'create', 'update'], ['coordination.k8s.io'], ['leases'], false),
      ],
    }),
    flowSchema('endpoint-controller', 'workload-high', 150, 'ByUser', {
      subjects: [...users(KCM), ...kubeSystemSAs('endpoint-controller', 'endpointslicemirroring-controller')],
      resourceRules: [resourceRule(['get', 'create', 'update'], [''], ['endpoints'], false)],
    }),
    flowSchema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', all(users(KCM))),
    flowSchema('kube-scheduler', 'workload-high', 800, 'ByNamespace', all(users(SCHEDULER))),
    flowSchema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', all(kubeSystemSAs('*'))),
    flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', all(groups('system:serviceaccounts'))),
    flowSchema('global-default', 'global-default', 9900, 'ByUser', all(groups('system:unauthenticated', 'system:authenticated'))),
  ];
}

/** what an apiserver fills in when a level is stored without these fields (v1 defaulting) */
export const DEFAULT_LIMITED_SHARES = 30;
export const DEFAULT_QUEUING = { queues: 64, handSize: 8, queueLengthLimit: 50 } as const;
