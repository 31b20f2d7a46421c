// Validating and mutating admission policies alike: each policy with its bindings (by name),
// the policies without a binding left out, compiled through the plugin's cache.

interface Named {
  metadata: { name?: string };
}

interface Binding extends Named {
  spec?: { policyName?: string };
}

interface CompiledCache<P, C> {
  get(policy: P): C;
  /** forgets compiled policies whose names are not in `names` */
  retain(names: Set<string>): void;
}

/** the policies that have bindings, by policy name, each with its bindings by name */
export function policiesWithBindings<P extends Named, B extends Binding, C extends { name: string }>(
  policies: readonly P[],
  bindings: readonly B[],
  cache: CompiledCache<P, C>,
): { policy: C; bindings: B[] }[] {
  const byPolicy = new Map<string, B[]>();
  for (const b of bindings) {
    const name = b.spec?.policyName ?? '';
    const list = byPolicy.get(name) ?? [];
    list.push(b);
    byPolicy.set(name, list);
  }
  const out: { policy: C; bindings: B[] }[] = [];
  const names = new Set<string>();
  for (const p of policies) {
    const name = p.metadata.name ?? '';
    names.add(name);
    const bs = byPolicy.get(name);
    if (!bs || bs.length === 0) continue;
    bs.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
    out.push({ policy: cache.get(p), bindings: bs });
  }
  cache.retain(names);
  return out.sort((a, b) => (a.policy.name < b.policy.name ? -1 : 1));
}
