// Small builders shared by the storage conformance suite and the cacher's own tests.

import type { KubeObject, SelectionPredicate } from '../interface.js';
import { isStorageError, type StorageErrorCode } from '../errors.js';

export function makePod(
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
  spec: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, labels },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
  };
}

export function podKey(namespace: string, name: string): string {
  return `/pods/${namespace}/${name}`;
}

/** a label-selector-like predicate: every given label must be present with the given value */
export function labelPredicate(selector: Record<string, string>): SelectionPredicate {
  const entries = Object.entries(selector);
  return {
    isEverything: entries.length === 0,
    matches: (obj) => entries.every(([k, v]) => obj.metadata.labels?.[k] === v),
  };
}

/** matches everything but does not say so: lists must then omit remainingItemCount */
export const everythingInDisguise: SelectionPredicate = { isEverything: false, matches: () => true };

/** resolves to the StorageError code the promise rejected with; fails when it resolved */
export async function storageErrorCode(p: Promise<unknown>): Promise<StorageErrorCode> {
  try {
    await p;
  } catch (err) {
    if (isStorageError(err)) return err.code;
    throw err;
  }
  throw new Error('expected a StorageError, the call succeeded');
}

export function rvOf(obj: KubeObject | null | undefined): number {
  const rv = obj?.metadata.resourceVersion;
  if (!rv || !/^[0-9]+$/.test(rv)) throw new Error(`object has no numeric resourceVersion: ${String(rv)}`);
  return Number(rv);
}

export function names(items: KubeObject[]): string[] {
  return items.map((o) => o.metadata.name ?? '');
}
