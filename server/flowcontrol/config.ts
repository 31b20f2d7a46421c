// Typed views of FlowSchema and PriorityLevelConfiguration objects, read defensively (a
// stored object may lack defaulted fields, or be broken: a broken one is ignored, as kube
// ignores it).

import type { KubeObject } from '../../storage/interface.js';
import { DEFAULT_LIMITED_SHARES, DEFAULT_QUEUING } from './bootstrap.js';

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  /** ServiceAccount subjects only */
  namespace?: string;
}

export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope: boolean;
  namespaces: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface PolicyRule {
  subjects: Subject[];
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
}

export interface FlowSchemaConfig {
  name: string;
  uid: string;
  priorityLevel: string;
  matchingPrecedence: number;
  distinguisher?: 'ByUser' | 'ByNamespace';
  rules: PolicyRule[];
}

export interface QueuingConfig {
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

export interface PriorityLevelConfig {
  name: string;
  uid: string;
  exempt: boolean;
  nominalConcurrencyShares: number;
  /** undefined: Reject when the level is full */
  queuing?: QueuingConfig;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const num = (v: unknown, dflt: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : dflt);

function parseSubject(v: unknown): Subject | undefined {
  const s = obj(v);
  if (!s) return undefined;
  switch (s.kind) {
    case 'User': {
      const name = obj(s.user)?.name;
      return typeof name === 'string' ? { kind: 'User', name } : undefined;
    }
    case 'Group': {
      const name = obj(s.group)?.name;
      return typeof name === 'string' ? { kind: 'Group', name } : undefined;
    }
    case 'ServiceAccount': {
      const sa = obj(s.serviceAccount);
      if (typeof sa?.name !== 'string' || typeof sa.namespace !== 'string') return undefined;
      return { kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace };
    }
    default:
      return undefined;
  }
}

function parseRule(v: unknown): PolicyRule {
  const r = obj(v) ?? {};
  return {
    subjects: (Array.isArray(r.subjects) ? r.subjects : []).map(parseSubject).filter((s): s is Subject => s !== undefined),
    resourceRules: (Array.isArray(r.resourceRules) ? r.resourceRules : []).map((x) => {
      const rr = obj(x) ?? {};
      return {
        verbs: strings(rr.verbs),
        apiGroups: strings(rr.apiGroups),
        resources: strings(rr.resources),
        clusterScope: rr.clusterScope === true,
        namespaces: strings(rr.namespaces),
      };
    }),
    nonResourceRules: (Array.isArray(r.nonResourceRules) ? r.nonResourceRules : []).map((x) => {
      const nr = obj(x) ?? {};
      return { verbs: strings(nr.verbs), nonResourceURLs: strings(nr.nonResourceURLs) };
    }),
  };
}

export function parseFlowSchema(o: KubeObject): FlowSchemaConfig | undefined {
  const spec = obj(o.spec);
  const level = obj(spec?.priorityLevelConfiguration)?.name;
  if (!spec || typeof level !== 'string' || !o.metadata.name) return undefined;
  const dm = obj(spec.distinguisherMethod)?.type;
  return {
    name: o.metadata.name,
    uid: o.metadata.uid ?? '',
    priorityLevel: level,
    matchingPrecedence: num(spec.matchingPrecedence, 1000),
    distinguisher: dm === 'ByUser' || dm === 'ByNamespace' ? dm : undefined,
    rules: (Array.isArray(spec.rules) ? spec.rules : []).map(parseRule),
  };
}

/** undefined for a broken object (union fields that disagree with the type, exempt in name
 *  but not in type): kube ignores those too */
export function parsePriorityLevel(o: KubeObject): PriorityLevelConfig | undefined {
  const spec = obj(o.spec);
  const name = o.metadata.name;
  if (!spec || !name) return undefined;
  const uid = o.metadata.uid ?? '';
  if (spec.type === 'Exempt') {
    if (name !== 'exempt') return undefined;
    return { name, uid, exempt: true, nominalConcurrencyShares: num(obj(spec.exempt)?.nominalConcurrencyShares, 0) };
  }
  if (spec.type !== 'Limited' || name === 'exempt') return undefined;
  const limited = obj(spec.limited);
  if (!limited) return undefined;
  const lr = obj(limited.limitResponse);
  let queuing: QueuingConfig | undefined;
  if (lr?.type === 'Queue') {
    const q = obj(lr.queuing) ?? {};
    queuing = {
      queues: Math.max(1, num(q.queues, DEFAULT_QUEUING.queues)),
      handSize: Math.max(1, num(q.handSize, DEFAULT_QUEUING.handSize)),
      queueLengthLimit: Math.max(1, num(q.queueLengthLimit, DEFAULT_QUEUING.queueLengthLimit)),
    };
    queuing.handSize = Math.min(queuing.handSize, queuing.queues);
  } else if (lr?.type !== 'Reject' && lr !== undefined) {
    return undefined;
  }
  return { name, uid, exempt: false, nominalConcurrencyShares: num(limited.nominalConcurrencyShares, DEFAULT_LIMITED_SHARES), queuing };
}
