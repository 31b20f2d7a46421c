// A seeded PRNG (mulberry32) so that every fuzz case can be regenerated from (seed, case
// number) alone: a failure is replayed without running the cases before it.

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** the generator of case `index` under `seed`, independent of every other case */
  static forCase(seed: number, index: number): Prng {
    return new Prng(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));
  }

  /** uniform in [0, 1) */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** integer in [lo, hi] */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  bool(p = 0.5): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** a size that is usually small and sometimes huge (log-uniform up to `max`) */
  size(max: number): number {
    return Math.floor(Math.exp(this.next() * Math.log(max + 1))) - 1;
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * 256);
    return out;
  }

  /** a string from `alphabet` of length n */
  string(n: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789-.'): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }
}

/** a seed from the environment, or a fresh one */
export function seedFromEnv(value: string | undefined): number {
  if (value !== undefined && value !== '') {
    const n = Number(value);
    if (!Number.isInteger(n)) throw new Error(`KAPI_FUZZ_SEED must be an integer, got ${value}`);
    return n >>> 0;
  }
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}
