// One etcd compaction per interval for all replicas together, the way kube-apiserver's
// compactor works (k8s.io/apiserver pkg/storage/etcd3/compact.go):
//
// A shared key `<prefix>/compact_rev_key` counts compaction rounds in its VERSION. Every
// interval each replica tries a compare-and-swap: "if the key's version is still the one I
// last saw, write the revision I recorded last round". Exactly one replica wins a round; it
// compacts to the revision recorded in the previous round, so at least one interval of
// history always survives. Losers learn the current version and try again next interval; if
// the winner dies, another replica wins within two intervals. The key lives under the
// prefix so that a watch over the whole prefix sees a write at least once per interval.

import type { EtcdClient } from '../etcd/types.js';
import { isCompactedError } from '../etcd/errors.js';

export const COMPACT_KEY_NAME = 'compact_rev_key';

export interface CompactorOptions {
  prefix: string;
  intervalMs: number;
  /** observes each round (tests, logs, metrics) */
  onRound?: (round: CompactionRound) => void;
  /** a round failed (etcd unreachable, ...); the next interval tries again */
  onError?: (err: unknown) => void;
}

export type CompactionRound =
  /** this replica won the round with `version`; compacted to `compacted` (0: nothing yet) */
  | { won: true; version: number; compacted: number; revision: number }
  /** another replica has the round; `version` is the key's version now */
  | { won: false; version: number; revision: number };

export interface Compactor {
  /** stops the timer and waits for a round in flight */
  stop(): Promise<void>;
}

export function compactKey(prefix: string): Buffer {
  return Buffer.from(`${prefix.replace(/\/+$/, '')}/${COMPACT_KEY_NAME}`);
}

interface RoundState {
  /** the key's version this replica last saw */
  version: number;
  /** the revision recorded in the previous round: what the next win compacts to */
  revision: number;
}

async function runRound(client: EtcdClient, key: Buffer, state: RoundState): Promise<CompactionRound> {
  const res = await client.txn({
    compare: [{ key, target: 'VERSION', result: 'EQUAL', value: state.version }],
    success: [{ put: { key, value: Buffer.from(String(state.revision)) } }],
    failure: [{ range: { key } }],
  });
  const currentRevision = res.header.revision;
  if (!res.succeeded) {
    const r = res.responses[0];
    const version = r && 'range' in r ? (r.range.kvs[0]?.version ?? 0) : 0;
    state.version = version;
    state.revision = currentRevision;
    return { won: false, version, revision: currentRevision };
  }
  const toCompact = state.revision;
  state.version += 1;
  state.revision = currentRevision;
  // the first round after start only records a revision
  if (toCompact > 0) {
    try {
      await client.compact(toCompact);
    } catch (err) {
      // someone (compactNow, an operator) already compacted past it: nothing to do
      if (!isCompactedError(err)) throw err;
    }
  }
  return { won: true, version: state.version, compacted: toCompact, revision: currentRevision };
}

export function startCompactor(client: EtcdClient, opts: CompactorOptions): Compactor {
  const key = compactKey(opts.prefix);
  const state: RoundState = { version: 0, revision: 0 };
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> = Promise.resolve();

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      inFlight = runRound(client, key, state).then(
        (round) => opts.onRound?.(round),
        (err) => opts.onError?.(err),
      );
      void inFlight.then(schedule);
    }, opts.intervalMs);
    // the compactor alone must not keep a process alive
    timer.unref();
  };
  if (opts.intervalMs > 0) schedule();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await inFlight;
    },
  };
}

/** Compacts etcd to its current revision now (tests, the admin path) and waits until the
 *  compaction is physically done. Resolves the compacted revision. */
export async function compactNow(client: EtcdClient, prefix: string): Promise<number> {
  const { header } = await client.range({ key: compactKey(prefix), countOnly: true });
  try {
    await client.compact(header.revision, true);
  } catch (err) {
    if (!isCompactedError(err)) throw err;
  }
  return header.revision;
}

/** A revision etcd has been compacted to at least (0: no compaction yet). A winning round
 *  writes the current revision into the compact key and compacts to a revision it saw in the
 *  round before, which is never older than the key's previous value. */
export async function lastCompactedRevision(client: EtcdClient, prefix: string): Promise<number> {
  const key = compactKey(prefix);
  const now = (await client.range({ key })).kvs[0];
  if (!now || now.version < 2) return 0;
  const before = (await client.range({ key, revision: now.modRevision - 1 })).kvs[0];
  return before ? Number(before.value.toString()) : 0;
}
