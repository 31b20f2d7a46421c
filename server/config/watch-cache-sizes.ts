// --watch-cache-sizes and --default-watch-cache-size. As in kube-apiserver 1.33 the cache
// sizes itself, so the only meaningful size is zero: `resource[.group]#0` serves that
// resource straight from etcd, and --default-watch-cache-size=0 does so for every resource
// that --watch-cache-sizes does not give a non-zero size.

export class WatchCacheSizeError extends Error {}

/** `resource[.group]` → size, from the flag's `resource[.group]#size` items */
export function parseWatchCacheSizes(items: readonly string[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const item of items) {
    const parts = item.split('#');
    const size = parts.length === 2 ? Number(parts[1]) : NaN;
    if (parts.length !== 2 || parts[0] === '' || !/^-?[0-9]+$/.test(parts[1]!) || !Number.isSafeInteger(size)) {
      throw new WatchCacheSizeError(`invalid value of watch cache size: ${item}`);
    }
    if (size < 0) throw new WatchCacheSizeError(`watch cache size cannot be negative: ${item}`);
    sizes.set(parts[0]!.toLowerCase(), size);
  }
  return sizes;
}

/** is the watch cache used for a resource served under these API names (`pods`,
 *  `deployments.apps`, ...: every group that shares its storage)? */
export function watchCacheEnabled(names: Iterable<string>, sizes: ReadonlyMap<string, number>, defaultSize: number): boolean {
  let explicit: number | undefined;
  for (const n of names) {
    const size = sizes.get(n);
    if (size === undefined) continue;
    if (size === 0) return false;
    explicit = size;
  }
  return explicit !== undefined || defaultSize > 0;
}
