// Every answer `kapi load` gets is recorded here: per verb, resource and replica its latency
// and outcome, and per second of the run the counts and latencies the report plots.

/** kube's API call latency SLOs (p99 over the run): single-object calls 1 s, lists 30 s */
export const SLO_SECONDS: Readonly<Record<string, number>> = { create: 1, update: 1, patch: 1, delete: 1, get: 1, list: 30 };

/** latencies kept per series; beyond it a uniform sample keeps the percentiles honest */
const MAX_SAMPLES = 200_000;
const MAX_SAMPLES_PER_SECOND = 2_000;

export interface Outcome {
  verb: string;
  resource: string;
  /** the Kapi-Replica header of the answer, '' when absent */
  replica: string;
  /** HTTP status; 0 when no answer came */
  status: number;
  /** the Status reason of an error answer, or the network error's code */
  reason?: string;
  /** performance.now() when the request was sent */
  startedAt: number;
  latencyMs: number;
}

class Samples {
  readonly values: number[] = [];
  seen = 0;
  constructor(private readonly cap: number) {}
  add(v: number): void {
    this.seen++;
    if (this.values.length < this.cap) this.values.push(v);
    else {
      const at = Math.floor(Math.random() * this.seen);
      if (at < this.cap) this.values[at] = v;
    }
  }
}

export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Series {
  verb: string;
  resource: string;
  replica: string;
  ok: number;
  latencies: Samples;
  errors: Map<string, number>;
}

interface Second {
  /** per `verb resource`: answered calls and their latencies */
  calls: Map<string, Samples>;
  /** per replica: answered calls */
  byReplica: Map<string, number>;
  errors: number;
}

export interface CallStats {
  verb: string;
  resource: string;
  replica?: string;
  count: number;
  errors: number;
  perSecond: number;
  p50Ms?: number;
  p90Ms?: number;
  p99Ms?: number;
  /** the SLO this call kind is held to, and whether p99 met it */
  sloSeconds?: number;
  sloMet?: boolean;
  errorsByCode: Record<string, number>;
}

export interface TimePoint {
  second: number;
  /** `verb resource` -> calls answered in that second */
  calls: Record<string, number>;
  /** `verb resource` -> p99 latency of that second, ms */
  p99Ms: Record<string, number>;
  byReplica: Record<string, number>;
  errors: number;
}

export class Recorder {
  private readonly series = new Map<string, Series>();
  private readonly seconds: Second[] = [];
  readonly startedAt = performance.now();
  total = 0;
  failed = 0;

  record(o: Outcome): void {
    const key = `${o.verb}\0${o.resource}\0${o.replica}`;
    let s = this.series.get(key);
    if (!s)
      this.series.set(
        key,
        (s = { verb: o.verb, resource: o.resource, replica: o.replica, ok: 0, latencies: new Samples(MAX_SAMPLES), errors: new Map() }),
      );
    this.total++;
    const failed = o.status === 0 || o.status >= 400;
    const sec = this.secondAt(o.startedAt + o.latencyMs);
    if (failed) {
      this.failed++;
      sec.errors++;
      const code = `${o.status === 0 ? 'no answer' : o.status}${o.reason ? ` ${o.reason}` : ''}`;
      s.errors.set(code, (s.errors.get(code) ?? 0) + 1);
      return;
    }
    s.ok++;
    s.latencies.add(o.latencyMs);
    const call = `${o.verb} ${o.resource}`;
    let samples = sec.calls.get(call);
    if (!samples) sec.calls.set(call, (samples = new Samples(MAX_SAMPLES_PER_SECOND)));
    samples.add(o.latencyMs);
    sec.byReplica.set(o.replica, (sec.byReplica.get(o.replica) ?? 0) + 1);
  }

  private secondAt(at: number): Second {
    const i = Math.max(0, Math.floor((at - this.startedAt) / 1000));
    while (this.seconds.length <= i) this.seconds.push({ calls: new Map(), byReplica: new Map(), errors: 0 });
    return this.seconds[i]!;
  }

  /** the replicas that answered, '' standing for answers without the header */
  replicas(): string[] {
    return [...new Set([...this.series.values()].map((s) => s.replica))].sort();
  }

  /** per verb and resource, or per verb, resource and replica */
  stats(perReplica: boolean, wallSeconds: number): CallStats[] {
    const groups = new Map<string, Series[]>();
    for (const s of this.series.values()) {
      const key = perReplica ? `${s.verb}\0${s.resource}\0${s.replica}` : `${s.verb}\0${s.resource}`;
      const list = groups.get(key) ?? [];
      list.push(s);
      groups.set(key, list);
    }
    const out: CallStats[] = [];
    for (const list of groups.values()) {
      const first = list[0]!;
      const latencies = list.flatMap((s) => s.latencies.values).sort((a, b) => a - b);
      const count = list.reduce((n, s) => n + s.ok, 0);
      const errorsByCode: Record<string, number> = {};
      for (const s of list) for (const [code, n] of s.errors) errorsByCode[code] = (errorsByCode[code] ?? 0) + n;
      const errors = Object.values(errorsByCode).reduce((n, x) => n + x, 0);
      const slo = SLO_SECONDS[first.verb];
      const p99 = percentile(latencies, 99);
      out.push({
        verb: first.verb,
        resource: first.resource,
        ...(perReplica ? { replica: first.replica } : {}),
        count,
        errors,
        perSecond: wallSeconds > 0 ? count / wallSeconds : 0,
        p50Ms: percentile(latencies, 50),
        p90Ms: percentile(latencies, 90),
        p99Ms: p99,
        ...(slo !== undefined ? { sloSeconds: slo, sloMet: p99 === undefined || p99 <= slo * 1000 } : {}),
        errorsByCode,
      });
    }
    return out.sort((a, b) => `${a.resource} ${a.verb} ${a.replica ?? ''}`.localeCompare(`${b.resource} ${b.verb} ${b.replica ?? ''}`));
  }

  timeline(): TimePoint[] {
    return this.seconds.map((s, second) => {
      const calls: Record<string, number> = {};
      const p99Ms: Record<string, number> = {};
      for (const [call, samples] of s.calls) {
        calls[call] = samples.seen;
        p99Ms[call] = percentile(
          [...samples.values].sort((a, b) => a - b),
          99,
        )!;
      }
      return { second, calls, p99Ms, byReplica: Object.fromEntries(s.byReplica), errors: s.errors };
    });
  }
}
