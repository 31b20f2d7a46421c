// Picking a free value (an address, a port) when every taken value is one etcd key written
// with a create-only transaction. Correctness rests on etcd alone: whoever creates the key
// owns the value, so two replicas allocating at once never get the same one. Speed rests on
// guessing well: a few random probes (almost always enough in a sparse range), then one read
// of what is taken and a walk from a random point over the rest (dense ranges), as
// kube-apiserver walks its IPAddress cache.

import { bandSize, randomBelow, type Band } from './ip.js';

export interface PoolBackend {
  /** writes the key of `value` if absent: true when this call took it, false when taken */
  tryTake(value: bigint): Promise<boolean>;
  /** what is taken now (may lag a moment behind etcd; tryTake has the last word) */
  listTaken(): Promise<Set<bigint>>;
}

export interface PickOptions {
  /** random probes per band before reading the taken set; default 4 */
  probes?: number;
  /** values never handed out dynamically (e.g. the kubernetes Service's address) */
  skip?: (value: bigint) => boolean;
}

/** takes a free value from the first band that has one; undefined when all are full */
export async function takeFree(bands: readonly Band[], backend: PoolBackend, opts: PickOptions = {}): Promise<bigint | undefined> {
  const probes = opts.probes ?? 4;
  const skip = opts.skip ?? (() => false);
  let taken: Set<bigint> | undefined;
  for (const band of bands) {
    const size = bandSize(band);
    if (size <= 0n) continue;
    for (let i = 0; i < probes; i++) {
      const v = band.first + randomBelow(size);
      if (skip(v) || taken?.has(v)) continue;
      if (await backend.tryTake(v)) return v;
    }
    taken ??= await backend.listTaken();
    const got = await walk(band, size, taken, backend, skip);
    if (got !== undefined) return got;
  }
  return undefined;
}

/** every free value of the band once, from a random start, wrapping around */
async function walk(
  band: Band,
  size: bigint,
  taken: Set<bigint>,
  backend: PoolBackend,
  skip: (v: bigint) => boolean,
): Promise<bigint | undefined> {
  let used = 0n;
  for (const v of taken) if (v >= band.first && v <= band.last) used++;
  if (used >= size) return undefined;
  const start = randomBelow(size);
  for (let i = 0n; i < size; i++) {
    const v = band.first + ((start + i) % size);
    if (taken.has(v) || skip(v)) continue;
    if (await backend.tryTake(v)) return v;
    // another replica took it since we read the taken set
    taken.add(v);
  }
  return undefined;
}
