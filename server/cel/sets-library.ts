// cel-go's sets extension (ext.Sets, in kube's environments since 1.29):
// sets.contains(a, b): every element of b is in a; sets.equivalent(a, b): each contains the
// other; sets.intersects(a, b): some element is in both. Elements compare with CEL equality,
// numbers across int, uint and double. cel-go's `list(T), list(T)` binding is checked in
// ./compile-checks.ts.

import type { Environment } from '@marcbachmann/cel-js';
import { celEquals } from './values.js';

class SetsNamespace {}

const contains = (a: unknown[], b: unknown[]): boolean => b.every((x) => a.some((y) => celEquals(x, y)));

export function registerSetsLibrary(env: Environment): Environment {
  return env
    .registerType('SetsNamespace', SetsNamespace)
    .registerConstant('sets', 'SetsNamespace', new SetsNamespace())
    .registerFunction('SetsNamespace.contains(list<dyn>, list<dyn>): bool', (_ns: SetsNamespace, a: unknown[], b: unknown[]) =>
      contains(a, b),
    )
    .registerFunction(
      'SetsNamespace.equivalent(list<dyn>, list<dyn>): bool',
      (_ns: SetsNamespace, a: unknown[], b: unknown[]) => contains(a, b) && contains(b, a),
    )
    .registerFunction('SetsNamespace.intersects(list<dyn>, list<dyn>): bool', (_ns: SetsNamespace, a: unknown[], b: unknown[]) =>
      a.some((x) => b.some((y) => celEquals(x, y))),
    );
}
