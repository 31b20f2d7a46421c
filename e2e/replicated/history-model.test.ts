// The soak's checker must catch what it claims to catch: a lost, repeated, reordered or
// altered event, a wrong initial list, a label selector's leave/enter events, a bookmark that
// overtakes events, a lost or doubled write. Checked here on hand-made histories.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  expectedEvents,
  validateReads,
  validateReflector,
  validateWrites,
  witnessesOf,
  type Truth,
  type WriteRecord,
} from './history-model.js';
import type { ReadRecord } from './reader.js';
import { Reflector, type ObservedEvent } from './reflector.js';

const st = (rv: number, seq: string, group: string, createRevision = rv) => ({ data: { seq }, labels: { g: group }, rv, createRevision });

// ns a: x created at 11, updated at 12 (group 1 -> 2), deleted at 14; y created at 13
const truth: Truth = {
  fromRev: 10,
  toRev: 14,
  initial: new Map(),
  changes: [
    { rev: 11, namespace: 'a', name: 'x', cur: st(11, 's1', '1') },
    { rev: 12, namespace: 'a', name: 'x', cur: st(12, 's2', '2', 11) },
    { rev: 13, namespace: 'a', name: 'y', cur: st(13, 's3', '1') },
    { rev: 14, namespace: 'a', name: 'x', cur: undefined },
  ],
};

function reflector(listRv: number, events: Omit<ObservedEvent, 'stream' | 'namespace'>[], listItems: ObservedEvent[] = []): Reflector {
  const r = new Reflector({
    name: 'r',
    creds: { server: '', ca: Buffer.alloc(0), cert: Buffer.alloc(0), key: Buffer.alloc(0) },
    servers: [],
    path: '',
  });
  r.listRv = listRv;
  r.listItems = listItems;
  r.events.push(...events.map((e) => ({ ...e, namespace: 'a', stream: 0 })));
  return r;
}

const ev = (type: ObservedEvent['type'], name: string, rv: number, seq: string, g: string) => ({
  type,
  name,
  rv,
  data: { seq },
  labels: { g },
});

describe('soak checker', () => {
  it('derives the events a namespace watcher and a label-selector watcher must see', () => {
    assert.deepEqual(
      expectedEvents(truth, { namespace: 'a' }, 10).map((e) => `${e.type} ${e.name} ${e.rv} ${e.data.seq}`),
      ['ADDED x 11 s1', 'MODIFIED x 12 s2', 'ADDED y 13 s3', 'DELETED x 14 s2'],
    );
    // x leaves g=1 at 12: a DELETED with the last state g=1 saw, at the revision of the change
    assert.deepEqual(
      expectedEvents(truth, { label: { key: 'g', value: '1' } }, 10).map((e) => `${e.type} ${e.name} ${e.rv} ${e.data.seq}`),
      ['ADDED x 11 s1', 'DELETED x 12 s1', 'ADDED y 13 s3'],
    );
    assert.deepEqual(
      expectedEvents(truth, { label: { key: 'g', value: '2' } }, 11).map((e) => `${e.type} ${e.name} ${e.rv}`),
      ['ADDED x 12', 'DELETED x 14'],
    );
  });

  const good = [
    ev('ADDED', 'x', 11, 's1', '1'),
    ev('MODIFIED', 'x', 12, 's2', '2'),
    ev('ADDED', 'y', 13, 's3', '1'),
    ev('DELETED', 'x', 14, 's2', '2'),
  ];

  it('accepts the right history', () => {
    assert.deepEqual(validateReflector(reflector(10, good), truth, { namespace: 'a' }), []);
  });

  it('catches a lost, a repeated, a reordered and an altered event', () => {
    const lost = validateReflector(reflector(10, [good[0]!, good[2]!, good[3]!]), truth, { namespace: 'a' });
    assert.match(lost.join('\n'), /event 1 of 4 expected \/ 3 seen: expected MODIFIED a\/x rv=12/);
    const repeated = validateReflector(reflector(10, [good[0]!, good[1]!, good[1]!, good[2]!, good[3]!]), truth, { namespace: 'a' });
    assert.match(repeated.join('\n'), /event 2 at rv 12 follows rv 12/);
    const reordered = validateReflector(reflector(10, [good[1]!, good[0]!, good[2]!, good[3]!]), truth, { namespace: 'a' });
    assert.match(reordered.join('\n'), /event 1 at rv 11 follows rv 12/);
    const altered = validateReflector(reflector(10, [good[0]!, ev('MODIFIED', 'x', 12, 's1', '2'), good[2]!, good[3]!]), truth, {
      namespace: 'a',
    });
    assert.match(altered.join('\n'), /got MODIFIED a\/x rv=12 seq=s1/);
  });

  it('catches an initial list that is not the state at its resourceVersion', () => {
    const item = (name: string, rv: number, seq: string, g: string): ObservedEvent => ({
      type: 'ADDED',
      namespace: 'a',
      name,
      rv,
      data: { seq },
      labels: { g },
      stream: 0,
    });
    assert.deepEqual(validateReflector(reflector(12, good.slice(2), [item('x', 12, 's2', '2')]), truth, { namespace: 'a' }), []);
    assert.match(
      validateReflector(reflector(12, good.slice(2), [item('x', 11, 's1', '1')]), truth, { namespace: 'a' }).join('\n'),
      /has a\/x at rv 11 seq s1, etcd had rv 12 seq s2/,
    );
    assert.match(validateReflector(reflector(12, good.slice(2), []), truth, { namespace: 'a' }).join('\n'), /lacks a\/x/);
  });

  it('catches a bookmark ahead of an event it should have covered', () => {
    const r = reflector(10, good);
    r.bookmarks.push({ rv: 13, afterEvents: 2 });
    assert.match(validateReflector(r, truth, { namespace: 'a' }).join('\n'), /bookmark at 13 was followed by an event at rv 13/);
  });

  it('catches a lost, a misplaced and a doubled write', () => {
    const w = (op: WriteRecord['op'], name: string, seq: string, rv?: number, extra: Partial<WriteRecord> = {}): WriteRecord => ({
      writer: 0,
      op,
      namespace: 'a',
      name,
      seq,
      rv,
      acked: true,
      labels: op === 'delete' ? undefined : { g: seq === 's2' ? '2' : '1' },
      ...extra,
    });
    const right = [
      w('create', 'x', 's1', 11),
      w('update', 'x', 's2', 12),
      w('create', 'y', 's3', 13),
      w('delete', 'x', 's2', undefined, { prevRv: 12 }),
    ];
    assert.deepEqual(validateWrites(right, truth), []);
    assert.match(
      validateWrites([...right, w('create', 'z', 's9', 15)], truth).join('\n'),
      /create of a\/z \(seq s9\) at rv 15: etcd has no change/,
    );
    assert.match(validateWrites([w('update', 'x', 's2', 11)], truth).join('\n'), /update of a\/x \(seq s2\) at rv 11: etcd has seq s1/);
    assert.match(
      validateWrites([w('delete', 'y', 's3', undefined, { prevRv: 13 })], truth).join('\n'),
      /delete of a\/y \(at rv 13\): etcd has 0 deletions/,
    );
    const doubled: Truth = { ...truth, changes: [...truth.changes, { rev: 15, namespace: 'a', name: 'y', cur: st(15, 's3', '1', 13) }] };
    assert.match(validateWrites(right, doubled).join('\n'), /write s3 \(create a\/y\) applied 2 times/);
    const phantom: Truth = { ...truth, changes: [...truth.changes, { rev: 15, namespace: 'a', name: 'q', cur: st(15, 'w9-1', '1') }] };
    assert.match(validateWrites(right, phantom).join('\n'), /etcd has seq w9-1 \(a\/q\) that no writer wrote/);
  });

  it('catches a consistent read older than an acknowledged write, and a list that is not the state at its rv', () => {
    const write: WriteRecord = {
      writer: 0,
      op: 'update',
      namespace: 'a',
      name: 'x',
      seq: 's2',
      rv: 12,
      acked: true,
      sentAt: 10,
      doneAt: 20,
    };
    const read = (sentAt: number, rv: number, items: ReadRecord['items']): ReadRecord => ({
      server: 'r',
      namespace: 'a',
      sentAt,
      doneAt: sentAt + 5,
      status: 200,
      rv,
      items,
    });
    // sent before the write was acknowledged: rv 11 is fine; after: it must be 12 or newer
    assert.deepEqual(validateReads([read(15, 11, [{ name: 'x', rv: 11, seq: 's1' }])], [write], truth), []);
    assert.deepEqual(validateReads([read(25, 12, [{ name: 'x', rv: 12, seq: 's2' }])], [write], truth), []);
    assert.match(
      validateReads([read(25, 11, [{ name: 'x', rv: 11, seq: 's1' }])], [write], truth).join('\n'),
      /stale read: list of a on r at rv 11, sent after update of a\/x was acknowledged at rv 12/,
    );
    assert.match(
      validateReads([read(25, 13, [{ name: 'x', rv: 12, seq: 's2' }])], [write], truth).join('\n'),
      /at rv 13 is not the state then: missing y@13:s3/,
    );
    // failed reads are no statement about the state
    assert.deepEqual(validateReads([{ server: 'r', namespace: 'a', sentAt: 25, doneAt: 30, status: 429 }], [write], truth), []);
  });
  it('names what the other watches on a replica saw of a change one of them skipped', () => {
    const onServer = (r: Reflector): Reflector => {
      r.streams.push({ server: 's', fromRv: 10, startedAt: 0, status: 200, events: r.events.length, bookmarks: 0 });
      return r;
    };
    const skipped = onServer(reflector(10, [ev('ADDED', 'x', 11, 's1', '1'), ev('ADDED', 'y', 13, 's3', '1')]));
    const saw = onServer(
      reflector(10, [ev('ADDED', 'x', 11, 's1', '1'), ev('MODIFIED', 'x', 12, 's2', '2'), ev('ADDED', 'y', 13, 's3', '1')]),
    );
    // x leaves g=1 at 12: a change that concerns a g=1 watcher through the state before it
    const selected = onServer(
      reflector(10, [ev('ADDED', 'x', 11, 's1', '1'), ev('DELETED', 'x', 12, 's1', '1'), ev('ADDED', 'y', 13, 's3', '1')]),
    );
    // a g=2 watcher on another replica is not a witness
    const elsewhere = reflector(10, [ev('ADDED', 'x', 12, 's2', '2')]);
    elsewhere.streams.push({ server: 't', fromRv: 10, startedAt: 0, status: 200, events: 1, bookmarks: 0 });
    const lines = witnessesOf(
      12,
      's',
      [
        { r: skipped, scope: { namespace: 'a' } },
        { r: saw, scope: { namespace: 'a' } },
        { r: selected, scope: { label: { key: 'g', value: '1' } } },
        { r: elsewhere, scope: { label: { key: 'g', value: '2' } } },
      ],
      truth,
    );
    assert.deepEqual(lines, [
      '3 streams on s of watchers the change at rev 12 concerns ran across it',
      'r stream 0 from rv 10: MISSED it',
      'r stream 0 from rv 10: saw it',
      'r stream 0 from rv 10: saw it',
    ]);
    assert.deepEqual(witnessesOf(99, 's', [], truth), ["no change at rev 99 in etcd's history"]);
  });
});
