import assert from 'node:assert/strict';
import { test } from 'node:test';
import { updatedConditions, type DeletionOutcome } from './namespace-conditions.js';

const t0 = new Date('2025-01-01T00:00:00.123Z');
const t1 = new Date('2025-01-01T00:05:00Z');

function outcome(partial: Partial<DeletionOutcome> = {}): DeletionOutcome {
  return { contentErrors: [], remainingByResource: new Map(), remainingByFinalizer: new Map(), ...partial };
}

test('a clean pass writes every condition type as False with its healthy reason', () => {
  const { conditions, changed } = updatedConditions(undefined, outcome(), t0);
  assert.equal(changed, true);
  assert.deepEqual(
    conditions.map((c) => [c.type, c.status, c.reason]),
    [
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted'],
      ['NamespaceContentRemaining', 'False', 'ContentRemoved'],
      ['NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers'],
    ],
  );
  assert.equal(conditions[0]!.lastTransitionTime, '2025-01-01T00:00:00Z');
  assert.deepEqual(Object.keys(conditions[0]!), ['type', 'status', 'lastTransitionTime', 'reason', 'message']);
});

test('remaining content and finalizers are described, sorted, like kube-controller-manager does', () => {
  const { conditions } = updatedConditions(
    undefined,
    outcome({
      remainingByResource: new Map([
        ['pods.', 2],
        ['configmaps.', 1],
      ]),
      remainingByFinalizer: new Map([['example.com/hold', 3]]),
      contentErrors: ['b failed', 'a failed'],
    }),
    t0,
  );
  const byType = new Map(conditions.map((c) => [c.type, c]));
  assert.deepEqual(byType.get('NamespaceContentRemaining'), {
    type: 'NamespaceContentRemaining',
    status: 'True',
    lastTransitionTime: '2025-01-01T00:00:00Z',
    reason: 'SomeResourcesRemain',
    message: 'Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances',
  });
  assert.equal(
    byType.get('NamespaceFinalizersRemaining')?.message,
    'Some content in the namespace has finalizers remaining: example.com/hold in 3 resource instances',
  );
  assert.equal(byType.get('NamespaceDeletionContentFailure')?.reason, 'ContentDeletionFailed');
  assert.equal(
    byType.get('NamespaceDeletionContentFailure')?.message,
    'Failed to delete all resource types, 2 remaining: a failed, b failed',
  );
});

test('an unchanged outcome is not a change; a status flip moves lastTransitionTime', () => {
  const first = updatedConditions(undefined, outcome({ remainingByResource: new Map([['configmaps.', 1]]) }), t0);
  const again = updatedConditions(first.conditions, outcome({ remainingByResource: new Map([['configmaps.', 1]]) }), t1);
  assert.equal(again.changed, false);
  const cleared = updatedConditions(first.conditions, outcome(), t1);
  assert.equal(cleared.changed, true);
  const remaining = cleared.conditions.find((c) => c.type === 'NamespaceContentRemaining')!;
  assert.equal(remaining.status, 'False');
  assert.equal(remaining.lastTransitionTime, '2025-01-01T00:05:00Z');
  const untouched = cleared.conditions.find((c) => c.type === 'NamespaceDeletionDiscoveryFailure')!;
  assert.equal(untouched.lastTransitionTime, '2025-01-01T00:00:00Z');
});

test('conditions of other types are kept', () => {
  const other = { type: 'Custom', status: 'True' as const, lastTransitionTime: 'x', reason: 'R', message: 'M' };
  const { conditions } = updatedConditions([other], outcome(), t0);
  assert.deepEqual(conditions[0], other);
  assert.equal(conditions.length, 6);
});
