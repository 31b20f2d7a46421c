// The status conditions kube-controller-manager's namespace controller keeps on a
// terminating Namespace, so that `kubectl describe ns` explains why it is still there. Every
// type is always present: True with a failure reason while something is wrong, False with
// the "all good" reason otherwise. lastTransitionTime changes only when status flips.

import { rfc3339 } from '../registry/object.js';

export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** what one pass of content deletion found */
export interface DeletionOutcome {
  /** set when the list of resources could not be found out */
  discoveryError?: string;
  /** one message per resource type whose deletion failed */
  contentErrors: string[];
  /** `<resource>.<group>` -> instances still present (the core group gives `pods.`) */
  remainingByResource: Map<string, number>;
  /** finalizer -> instances it still holds */
  remainingByFinalizer: Map<string, number>;
}

const conditionTypes = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

type ConditionType = (typeof conditionTypes)[number];

const healthy: Record<ConditionType, { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: { reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
  NamespaceDeletionGroupVersionParsingFailure: { reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
  NamespaceDeletionContentFailure: {
    reason: 'ContentDeleted',
    message: 'All content successfully deleted, may be waiting on finalization',
  },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: { reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
};

function describeCounts(counts: Map<string, number>, phrase: (name: string, n: number) => string): string {
  return [...counts]
    .filter(([, n]) => n > 0)
    .map(([name, n]) => phrase(name, n))
    .sort()
    .join(', ');
}

/** the failing conditions `outcome` calls for; types not returned are healthy */
function failures(outcome: DeletionOutcome): Map<ConditionType, { reason: string; message: string }> {
  const out = new Map<ConditionType, { reason: string; message: string }>();
  if (outcome.discoveryError !== undefined) {
    out.set('NamespaceDeletionDiscoveryFailure', { reason: 'DiscoveryFailed', message: outcome.discoveryError });
  }
  if (outcome.contentErrors.length > 0) {
    const msgs = [...outcome.contentErrors].sort();
    out.set('NamespaceDeletionContentFailure', {
      reason: 'ContentDeletionFailed',
      message: `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(', ')}`,
    });
  }
  const resources = describeCounts(outcome.remainingByResource, (r, n) => `${r} has ${n} resource instances`);
  if (resources) {
    out.set('NamespaceContentRemaining', {
      reason: 'SomeResourcesRemain',
      message: `Some resources are remaining: ${resources}`,
    });
  }
  const finalizers = describeCounts(outcome.remainingByFinalizer, (f, n) => `${f} in ${n} resource instances`);
  if (finalizers) {
    out.set('NamespaceFinalizersRemaining', {
      reason: 'SomeFinalizersRemain',
      message: `Some content in the namespace has finalizers remaining: ${finalizers}`,
    });
  }
  return out;
}

/**
 * The namespace's conditions updated for `outcome`: conditions of other types are kept,
 * ours are added or rewritten. `changed` is false when nothing but timestamps would differ,
 * so the caller can skip the write.
 */
export function updatedConditions(
  existing: readonly NamespaceCondition[] | undefined,
  outcome: DeletionOutcome,
  now: Date,
): { conditions: NamespaceCondition[]; changed: boolean } {
  const conditions = (existing ?? []).map((c) => ({ ...c }));
  const failing = failures(outcome);
  const timestamp = rfc3339(now);
  let changed = false;
  for (const type of conditionTypes) {
    const failure = failing.get(type);
    const want = { status: failure ? ('True' as const) : ('False' as const), ...(failure ?? healthy[type]) };
    const old = conditions.find((c) => c.type === type);
    if (!old) {
      conditions.push({ type, status: want.status, lastTransitionTime: timestamp, reason: want.reason, message: want.message });
      changed = true;
    } else if (old.status !== want.status || old.reason !== want.reason || old.message !== want.message) {
      if (old.status !== want.status) old.lastTransitionTime = timestamp;
      old.status = want.status;
      old.reason = want.reason;
      old.message = want.message;
      changed = true;
    }
  }
  return { conditions, changed };
}
