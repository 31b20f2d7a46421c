// The expected history, in the manner of etcd's tests/robustness: what really happened is
// read back from etcd itself (no compaction during a soak, so a watch from the start revision
// replays every change with its exact revision), and everything the clients were told is
// checked against it:
//
// - every acknowledged write is in etcd's history at the resourceVersion it was acknowledged
//   with, with the content it wrote; writes whose outcome the writer could not know appear
//   at most once; nothing appears that nobody wrote, nothing twice;
// - every watcher's initial list is the state at its resourceVersion, and its events are
//   exactly the changes of its objects after that, once each, in resourceVersion order, with
//   the contents etcd holds, as the watch cache must derive them (ADDED, MODIFIED, DELETED,
//   and DELETED/ADDED for objects leaving/entering a label selector);
// - bookmarks never go back and never precede an event at or below them.

import { createEtcdClient } from '../../storage/etcd/client.js';
import type { EtcdClient } from '../../storage/etcd/types.js';
import { prefixEnd } from '../../storage/etcd/types.js';
import type { ObjectView, ObservedEvent, Reflector } from './reflector.js';
import type { ReadRecord } from './reader.js';

export interface ObjState {
  data: Record<string, string>;
  labels: Record<string, string>;
  /** etcd mod revision */
  rv: number;
  createRevision: number;
}

export interface TruthChange {
  rev: number;
  namespace: string;
  name: string;
  /** the state after; undefined for a deletion */
  cur: ObjState | undefined;
}

export interface Truth {
  fromRev: number;
  toRev: number;
  /** states at fromRev, by "namespace/name" */
  initial: Map<string, ObjState>;
  /** configmap changes in (fromRev, toRev], in revision order */
  changes: TruthChange[];
}

const CONFIGMAPS = '/configmaps/';

function parseKey(prefix: string, key: string): { namespace: string; name: string } | undefined {
  const base = `${prefix}${CONFIGMAPS}`;
  if (!key.startsWith(base)) return undefined;
  const [namespace, name, ...rest] = key.slice(base.length).split('/');
  if (!namespace || !name || rest.length) return undefined;
  return { namespace, name };
}

function stateOf(value: Buffer, rv: number, createRevision: number): ObjState {
  const obj = JSON.parse(value.toString('utf8')) as { data?: Record<string, string>; metadata?: { labels?: Record<string, string> } };
  return { data: obj.data ?? {}, labels: obj.metadata?.labels ?? {}, rv, createRevision };
}

/**
 * Reads every configmap change in (fromRev, toRev] from etcd. The watch covers the whole
 * keyspace: every revision is an event there, so the revision `toRev` itself says when the
 * history is complete (no progress notification, which etcd 3.4 may send early, is needed).
 */
export async function readTruth(endpoints: string[], prefix: string, fromRev: number, toRev: number): Promise<Truth> {
  const client: EtcdClient = createEtcdClient({ endpoints });
  try {
    const base = Buffer.from(`${prefix}${CONFIGMAPS}`);
    const initial = new Map<string, ObjState>();
    const listed = await client.rangeAll({ key: base, rangeEnd: prefixEnd(base), revision: fromRev });
    for (const kv of listed.kvs) {
      const id = parseKey(prefix, kv.key.toString('utf8'));
      if (id) initial.set(`${id.namespace}/${id.name}`, stateOf(kv.value, kv.modRevision, kv.createRevision));
    }
    const changes: TruthChange[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        w.cancel();
        reject(new Error(`etcd history: revision ${toRev} not reached within 60 s`));
      }, 60_000);
      const w = client.watch({ key: Buffer.from([0]), rangeEnd: Buffer.from([0]), startRevision: fromRev + 1 }, (msg) => {
        if (msg.kind === 'canceled') {
          clearTimeout(timer);
          reject(new Error(`etcd history watch canceled: ${msg.reason} (compacted ${msg.compactRevision})`));
          return;
        }
        if (msg.kind !== 'events') return;
        let done = false;
        for (const e of msg.events) {
          const rev = e.kv.modRevision;
          if (rev > toRev) {
            done = true;
            break;
          }
          const id = parseKey(prefix, e.kv.key.toString('utf8'));
          if (!id) continue;
          changes.push({
            rev,
            ...id,
            cur: e.type === 'PUT' ? stateOf(e.kv.value, rev, e.kv.createRevision) : undefined,
          });
          if (rev === toRev) done = true;
        }
        if (msg.revision >= toRev) done = true;
        if (done) {
          clearTimeout(timer);
          w.cancel();
          resolve();
        }
      });
    });
    return { fromRev, toRev, initial, changes };
  } finally {
    client.close();
  }
}

/** the current state at `rev` (fromRev <= rev <= toRev) */
export function stateAt(truth: Truth, rev: number): Map<string, ObjState> {
  const state = new Map(truth.initial);
  for (const c of truth.changes) {
    if (c.rev > rev) break;
    const k = `${c.namespace}/${c.name}`;
    if (c.cur) state.set(k, c.cur);
    else state.delete(k);
  }
  return state;
}

export interface Scope {
  namespace?: string;
  /** an equality label selector: label name and value */
  label?: { key: string; value: string };
}

function inScope(scope: Scope, namespace: string, labels: Record<string, string>): boolean {
  if (scope.namespace !== undefined && scope.namespace !== namespace) return false;
  if (scope.label && labels[scope.label.key] !== scope.label.value) return false;
  return true;
}

export interface ExpectedEvent extends ObjectView {
  type: ObservedEvent['type'];
}

/** the events a watch of `scope` from `afterRev` must deliver, in order */
export function expectedEvents(truth: Truth, scope: Scope, afterRev: number): ExpectedEvent[] {
  const state = new Map(truth.initial);
  const out: ExpectedEvent[] = [];
  for (const c of truth.changes) {
    const k = `${c.namespace}/${c.name}`;
    const prev = state.get(k);
    if (c.cur) state.set(k, c.cur);
    else state.delete(k);
    if (c.rev <= afterRev) continue;
    const curIn = c.cur !== undefined && inScope(scope, c.namespace, c.cur.labels);
    const prevIn = prev !== undefined && inScope(scope, c.namespace, prev.labels);
    const view = (s: ObjState): ObjectView => ({ namespace: c.namespace, name: c.name, rv: c.rev, data: s.data, labels: s.labels });
    if (curIn) out.push({ type: prevIn ? 'MODIFIED' : 'ADDED', ...view(c.cur!) });
    else if (prevIn) out.push({ type: 'DELETED', ...view(prev!) });
  }
  return out;
}

const same = (a: Record<string, string>, b: Record<string, string>): boolean => {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
};

const describe = (e: ExpectedEvent | ObservedEvent | undefined): string =>
  e ? `${e.type} ${e.namespace}/${e.name} rv=${e.rv} seq=${e.data.seq ?? '-'} labels=${JSON.stringify(e.labels)}` : '(none)';

/** everything wrong with one reflector's view, checked against the truth; [] when right */
export function validateReflector(r: Reflector, truth: Truth, scope: Scope): string[] {
  const name = r.opts.name;
  const problems = [...r.problems];

  // the initial list is the state at its resourceVersion
  if (r.listRv < truth.fromRev) {
    problems.push(`${name}: listed at ${r.listRv}, before the history starts (${truth.fromRev})`);
  } else {
    const want = [...stateAt(truth, r.listRv)].filter(([k, s]) => inScope(scope, k.split('/')[0]!, s.labels));
    const got = new Map(r.listItems.map((i) => [`${i.namespace}/${i.name}`, i]));
    if (want.length !== got.size) problems.push(`${name}: list at ${r.listRv} has ${got.size} items, the state then had ${want.length}`);
    for (const [k, s] of want) {
      const g = got.get(k);
      if (!g) problems.push(`${name}: list at ${r.listRv} lacks ${k}`);
      else if (g.rv !== s.rv || !same(g.data, s.data) || !same(g.labels, s.labels)) {
        problems.push(`${name}: list at ${r.listRv} has ${k} at rv ${g.rv} seq ${g.data.seq}, etcd had rv ${s.rv} seq ${s.data.seq}`);
      }
    }
  }

  // the events: exactly the expected ones, in order
  const want = expectedEvents(truth, scope, r.listRv);
  const got = r.events;
  let mismatches = 0;
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    const w = want[i];
    const g = got[i];
    const ok =
      w &&
      g &&
      w.type === g.type &&
      w.namespace === g.namespace &&
      w.name === g.name &&
      w.rv === g.rv &&
      same(w.data, g.data) &&
      same(w.labels, g.labels);
    if (ok) continue;
    if (mismatches++ < 3) {
      const stream = g ? r.streams[g.stream] : undefined;
      // the event before tells whether a gap lies inside one stream or across a resume
      const before = i > 0 ? got[i - 1] : undefined;
      problems.push(
        `${name}: event ${i} of ${want.length} expected / ${got.length} seen: expected ${describe(w)}; got ${describe(g)}` +
          (stream
            ? ` (stream ${g!.stream} on ${stream.server} from rv ${stream.fromRv}, ${stream.events} events, ended: ${stream.end?.kind ?? 'no'})`
            : '') +
          (before ? `; the event before: rv=${before.rv} on stream ${before.stream}` : ''),
      );
    }
  }
  if (mismatches > 3) problems.push(`${name}: ${mismatches} events differ in all`);

  // order: strictly increasing resourceVersions (repeats and reordering both show here)
  for (let i = 1; i < got.length; i++) {
    if (!(got[i]!.rv > got[i - 1]!.rv)) {
      problems.push(`${name}: event ${i} at rv ${got[i]!.rv} follows rv ${got[i - 1]!.rv}`);
      break;
    }
  }
  // bookmarks: an event after a bookmark is newer than it
  for (const b of r.bookmarks) {
    const next = got[b.afterEvents];
    if (next && next.rv <= b.rv) {
      problems.push(`${name}: bookmark at ${b.rv} was followed by an event at rv ${next.rv}`);
      break;
    }
  }
  return problems;
}

/** a write a writer attempted */
export interface WriteRecord {
  writer: number;
  op: 'create' | 'update' | 'patch' | 'delete';
  namespace: string;
  name: string;
  /** data.seq written (for deletes: the seq deleted) */
  seq: string;
  labels?: Record<string, string>;
  /** the write was acknowledged (2xx) */
  acked: boolean;
  /** the resourceVersion the server answered with (none for deletes: kube-apiserver answers
   *  a configmap delete with a Status) */
  rv?: number;
  /** for deletes: the resourceVersion of the object deleted */
  prevRv?: number;
  /** why the outcome is unknown */
  unknown?: string;
  /** performance.now() when sent and when answered (or given up) */
  sentAt?: number;
  doneAt?: number;
}

/** checks the writers' records against etcd's history; [] when right */
export function validateWrites(writes: WriteRecord[], truth: Truth): string[] {
  const problems: string[] = [];
  const bySeq = new Map<string, TruthChange[]>();
  const at = new Map<string, TruthChange>();
  for (const c of truth.changes) {
    at.set(`${c.rev} ${c.namespace}/${c.name}`, c);
    const seq = c.cur?.data.seq;
    if (seq !== undefined) {
      const list = bySeq.get(seq) ?? [];
      list.push(c);
      bySeq.set(seq, list);
    }
  }
  const written = new Set<string>();
  for (const w of writes) {
    if (w.op !== 'delete') written.add(w.seq);
    const key = `${w.namespace}/${w.name}`;
    if (!w.acked) {
      if (w.op !== 'delete' && (bySeq.get(w.seq)?.length ?? 0) > 1)
        problems.push(`write ${w.seq} (${w.op} ${key}, outcome unknown) applied ${bySeq.get(w.seq)!.length} times`);
      continue;
    }
    if (w.op === 'delete') {
      // names are never reused: exactly one deletion, right after the state deleted
      const dels = truth.changes.filter((c) => !c.cur && c.namespace === w.namespace && c.name === w.name);
      const next = truth.changes.find((c) => c.namespace === w.namespace && c.name === w.name && c.rev > (w.prevRv ?? 0));
      if (dels.length !== 1 || next !== dels[0]) {
        problems.push(
          `acknowledged delete of ${key} (at rv ${w.prevRv}): etcd has ${dels.length} deletions of it${next && next.cur ? `, and first a put of seq ${next.cur.data.seq} at ${next.rev}` : ''}`,
        );
      }
      continue;
    }
    const c = at.get(`${w.rv} ${key}`);
    if (!c) {
      problems.push(`acknowledged ${w.op} of ${key} (seq ${w.seq}) at rv ${w.rv}: etcd has no change of it at that revision`);
      continue;
    }
    if (!c.cur || c.cur.data.seq !== w.seq) {
      problems.push(
        `acknowledged ${w.op} of ${key} (seq ${w.seq}) at rv ${w.rv}: etcd has ${c.cur ? `seq ${c.cur.data.seq}` : 'a delete'}`,
      );
    } else if (w.op === 'create' && c.cur.createRevision !== w.rv) {
      problems.push(`acknowledged create of ${key} at rv ${w.rv}: etcd's create revision is ${c.cur.createRevision}`);
    } else if (w.labels && !same(w.labels, c.cur.labels)) {
      problems.push(
        `acknowledged ${w.op} of ${key} at rv ${w.rv}: labels ${JSON.stringify(c.cur.labels)}, written ${JSON.stringify(w.labels)}`,
      );
    }
    if ((bySeq.get(w.seq)?.length ?? 0) > 1) problems.push(`write ${w.seq} (${w.op} ${key}) applied ${bySeq.get(w.seq)!.length} times`);
  }
  for (const [seq, list] of bySeq) {
    if (seq.startsWith('w') && !written.has(seq))
      problems.push(`etcd has seq ${seq} (${list[0]!.namespace}/${list[0]!.name}) that no writer wrote`);
  }
  return problems;
}

/** checks consistent reads: each is the state at its resourceVersion, and not older than any
 *  write acknowledged before it was sent; [] when right */
export function validateReads(reads: ReadRecord[], writes: WriteRecord[], truth: Truth): string[] {
  const problems: string[] = [];
  const acked = writes.filter((w) => w.acked && w.rv !== undefined && w.doneAt !== undefined).sort((a, b) => a.doneAt! - b.doneAt!);
  const ok = reads.filter((r) => r.status === 200 && r.rv !== undefined).sort((a, b) => a.sentAt - b.sentAt);
  let i = 0;
  let newest: WriteRecord | undefined;
  for (const r of ok) {
    while (i < acked.length && acked[i]!.doneAt! < r.sentAt) {
      if (!newest || acked[i]!.rv! > newest.rv!) newest = acked[i];
      i++;
    }
    if (newest && r.rv! < newest.rv!) {
      problems.push(
        `stale read: list of ${r.namespace} on ${r.server} at rv ${r.rv}, sent after ${newest.op} of ${newest.namespace}/${newest.name} was acknowledged at rv ${newest.rv}`,
      );
      continue;
    }
    if (r.rv! > truth.toRev || r.rv! < truth.fromRev) continue;
    const want = [...stateAt(truth, r.rv!)]
      .filter(([k]) => k.startsWith(`${r.namespace}/`))
      .map(([k, s]) => `${k.slice(r.namespace.length + 1)}@${s.rv}:${s.data.seq}`)
      .sort();
    const got = r.items!.map((it) => `${it.name}@${it.rv}:${it.seq}`).sort();
    if (JSON.stringify(want) !== JSON.stringify(got)) {
      const missing = want.filter((x) => !got.includes(x));
      const extra = got.filter((x) => !want.includes(x));
      problems.push(
        `list of ${r.namespace} on ${r.server} at rv ${r.rv} is not the state then: missing ${missing.slice(0, 3).join(', ')}; extra ${extra.slice(0, 3).join(', ')}`,
      );
    }
  }
  return problems;
}

/**
 * For a watcher whose stream skipped the change at `rev` on `server`: what the other watchers
 * streaming from that replica across `rev` saw of it. Tells a change the replica never
 * applied (nobody there saw it) from one a single watch lost.
 */
export function witnessesOf(rev: number, server: string, watchers: { r: Reflector; scope: Scope }[], truth: Truth): string[] {
  const change = truth.changes.find((c) => c.rev === rev);
  if (!change) return [`no change at rev ${rev} in etcd's history`];
  const prev = stateAt(truth, rev - 1).get(`${change.namespace}/${change.name}`);
  const out: string[] = [];
  let spanning = 0;
  for (const { r, scope } of watchers) {
    const concerned =
      (change.cur !== undefined && inScope(scope, change.namespace, change.cur.labels)) ||
      (prev !== undefined && inScope(scope, change.namespace, prev.labels));
    if (!concerned) continue;
    r.streams.forEach((s, index) => {
      if (s.server !== server || s.fromRv >= rev) return;
      const events = r.events.filter((e) => e.stream === index);
      if (!events.some((e) => e.rv > rev)) return;
      spanning++;
      const saw = events.some((e) => e.rv === rev);
      if (out.length < 8) out.push(`${r.opts.name} stream ${index} from rv ${s.fromRv}: ${saw ? 'saw it' : 'MISSED it'}`);
    });
  }
  out.unshift(`${spanning} streams on ${server} of watchers the change at rev ${rev} concerns ran across it`);
  return out;
}
