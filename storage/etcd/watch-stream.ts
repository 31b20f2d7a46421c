// One bidirectional Watch stream per client, shared by every watcher.
//
// etcd numbers the watches of a stream in the order it receives their create requests and
// answers each create with a `created` response, so creates go out one at a time: the next
// one is sent when the previous one has been answered, and each `created` answer belongs to
// the oldest outstanding create.
//
// Resuming: each watcher remembers the next revision it needs (the revision after the last
// event it delivered, or after a progress notification that etcd sent on that watcher's own
// channel). When the stream breaks, every live watcher is re-created from that revision on a
// new stream (on the next endpoint when the old one failed): nothing is lost, and events at
// or below the last delivered revision are dropped should they ever come again.
//
// Progress: a response with no events that is neither `created` nor `canceled` is a progress
// notification. With watch_id -1 it answers a WatchProgressRequest and is meant for every
// watcher of the stream. etcd 3.4 answers such a request at once with its current revision,
// possibly ahead of events still queued for a catching-up watcher (etcd-io/etcd#15220); 3.5
// answers only when all watchers of the stream are in sync, and not at all otherwise or when
// the stream has no watchers, so a caller must ask again when no answer comes. Broadcast
// progress is therefore passed on marked unordered and never used as a resume point; only a
// watcher's own progress notification (etcd's periodic one, sent on that watcher's channel
// behind its events, and only while it is in sync) is ordered.

import { asEtcdError, isEndpointFailure } from './errors.js';
import type { EndpointPool, Endpoint } from './connection.js';
import { rpcs, num, header, keyValue, EVENT_DELETE, type WireWatchResponse } from './proto.js';
import type { StreamingCall } from './streaming-call.js';
import type { EtcdEvent, EtcdWatcher, WatchMessage, WatchRequest } from './types.js';

/** etcd's watch id for "no particular watcher" */
const BROADCAST_WATCH_ID = -1;
const RECONNECT_BACKOFF_MS = { initial: 50, max: 2_000 };
/** see WatchStream.deferred */
const DEFER_WHILE_CALLS_AT_MOST = 1;

interface WatcherState {
  readonly seq: number;
  readonly req: WatchRequest;
  readonly listener: (msg: WatchMessage) => void;
  /** etcd's id for this watcher on the current stream; null while not created there */
  id: number | null;
  /** the revision to start from when (re)created; 0: from now */
  nextRev: number;
  /** the last revision of a delivered event: later duplicates are dropped */
  lastEventRev: number;
  /** the highest revision announced to the listener (events or progress) */
  lastAnnouncedRev: number;
  closed: boolean;
}

type WatchCall = StreamingCall<object, WireWatchResponse>;

/** etcd then ends the stream when its member loses the leader, instead of going silent */
const WATCH_METADATA = { hasleader: 'true' };

export class WatchStream {
  private call: WatchCall | null = null;
  private callEndpoint: Endpoint | null = null;
  /** bumped for every new stream: events of an abandoned stream are ignored */
  private generation = 0;
  private readonly byId = new Map<number, WatcherState>();
  /** waiting for their create request to be sent */
  private queue: WatcherState[] = [];
  /** create request sent, `created` response not yet received */
  private creating: WatcherState | null = null;
  private progressWanted = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private connecting = false;
  private backoffMs = RECONNECT_BACKOFF_MS.initial;
  private nextSeq = 0;
  private closed = false;

  constructor(private readonly pool: EndpointPool) {}

  watch(req: WatchRequest, listener: (msg: WatchMessage) => void): EtcdWatcher {
    const start = req.startRevision ?? 0;
    const st: WatcherState = {
      seq: this.nextSeq++,
      req,
      listener,
      id: null,
      nextRev: start,
      lastEventRev: start > 0 ? start - 1 : 0,
      lastAnnouncedRev: start > 0 ? start - 1 : 0,
      closed: false,
    };
    if (this.closed) {
      queueMicrotask(() => listener({ kind: 'canceled', compactRevision: 0, reason: 'etcd client closed' }));
      st.closed = true;
    } else {
      this.queue.push(st);
      this.ensureStream();
      this.pump();
    }
    return {
      requestProgress: () => this.requestProgress(),
      cancel: () => this.cancel(st),
    };
  }

  requestProgress(): void {
    if (this.closed) return;
    this.progressWanted = true;
    this.pump();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const live = this.liveWatchers();
    this.byId.clear();
    this.queue = [];
    this.creating = null;
    this.dropCall();
    for (const st of live) this.finish(st, { kind: 'canceled', compactRevision: 0, reason: 'etcd client closed' });
  }

  private liveWatchers(): WatcherState[] {
    const all = [...this.byId.values(), ...this.queue];
    if (this.creating) all.push(this.creating);
    return all.filter((st) => !st.closed).sort((a, b) => a.seq - b.seq);
  }

  private cancel(st: WatcherState): void {
    if (st.closed) return;
    st.closed = true;
    const queued = this.queue.indexOf(st);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      return;
    }
    // a watcher still being created is canceled when its `created` answer arrives
    if (st.id !== null && this.byId.get(st.id) === st) {
      this.byId.delete(st.id);
      this.write({ cancelRequest: { watchId: st.id } });
    }
  }

  private ensureStream(): void {
    if (this.call || this.closed || this.reconnectTimer || this.connecting) return;
    const ep = this.pool.active;
    if (!ep.streams.ready) {
      this.connecting = true;
      void this.pool.connectStreams(ep).then((ok) => {
        this.connecting = false;
        if (this.closed) return;
        if (ok) this.openStream(ep);
        else this.onBroken(null, ep);
      });
      return;
    }
    this.openStream(ep);
  }

  private openStream(ep: Endpoint): void {
    const gen = ++this.generation;
    const call = ep.streams.openStream(rpcs.watch.path, WATCH_METADATA, rpcs.watch.serialize, rpcs.watch.deserialize, {
      onMessage: (res) => {
        if (this.deferring(ep)) this.later(() => gen === this.generation && this.onResponse(res));
        else if (gen === this.generation) this.onResponse(res);
      },
      // ended by etcd: with an error, or cleanly (null) as when its member lost the leader
      onClose: (err) => {
        if (this.deferring(ep)) this.later(() => gen === this.generation && this.onBroken(err));
        else if (gen === this.generation) this.onBroken(err);
      },
    });
    // the connection went away since it was found ready
    if (!call) return this.onBroken(null, ep);
    this.call = call;
    this.callEndpoint = ep;
    this.pump();
  }

  /**
   * Responses held back until the check phase of this turn of the event loop, in order. etcd
   * sends a write's event on the watch about when it answers the write, and the event often
   * comes first: handled at once, the cache's work on it (and everything watching the cache)
   * delays the writer's answer. So while one etcd call at most is waiting for its answer (a
   * client writing one at a time), that answer goes out first and the events follow it; under
   * load, events are handled as they come (held back there, they cost Pod creates about 4% of
   * throughput in alternated runs, bench/results.md).
   */
  private deferred: (() => unknown)[] = [];

  private deferring(ep: Endpoint): boolean {
    if (this.deferred.length > 0) return true;
    const waiting = ep.unary.callsInFlight;
    return waiting > 0 && waiting <= DEFER_WHILE_CALLS_AT_MOST;
  }

  private later(fn: () => unknown): void {
    this.deferred.push(fn);
    if (this.deferred.length === 1) setImmediate(() => this.runDeferred());
  }

  private runDeferred(): void {
    const batch = this.deferred;
    this.deferred = [];
    for (const fn of batch) {
      try {
        fn();
      } catch (err) {
        // as when a handler throws on the connection's own turn: the stream is given up and
        // its watchers resume on a new one (the rest of the batch belongs to the old stream)
        this.onBroken(err);
      }
    }
  }

  private write(req: object): void {
    this.call?.write(req);
  }

  /** sends the next create request, or a wanted progress request once all creates are done */
  private pump(): void {
    if (!this.call || this.creating) return;
    while (this.queue.length > 0) {
      const st = this.queue.shift()!;
      if (st.closed) continue;
      this.creating = st;
      this.write({
        createRequest: {
          key: st.req.key,
          rangeEnd: st.req.rangeEnd,
          startRevision: st.nextRev,
          progressNotify: st.req.progressNotify ?? false,
          prevKv: st.req.prevKv ?? false,
        },
      });
      return;
    }
    if (this.progressWanted) {
      this.progressWanted = false;
      this.write({ progressRequest: {} });
    }
  }

  private onResponse(res: WireWatchResponse): void {
    this.backoffMs = RECONNECT_BACKOFF_MS.initial;
    const id = num(res.watchId);
    const rev = header(res.header).revision;

    if (res.created) {
      const st = this.creating;
      this.creating = null;
      if (st) this.onCreated(st, id, rev, res);
      this.pump();
      return;
    }

    const st = this.byId.get(id);
    if (res.canceled || num(res.compactRevision) !== 0) {
      if (!st) return;
      this.byId.delete(id);
      this.finish(st, { kind: 'canceled', compactRevision: num(res.compactRevision), reason: res.cancelReason || 'canceled by etcd' });
      return;
    }

    if (res.events.length > 0) {
      if (st) this.deliverEvents(st, res);
      return;
    }

    if (id === BROADCAST_WATCH_ID) {
      for (const w of [...this.byId.values()]) this.announceProgress(w, rev, false);
    } else if (st) {
      // sent on this watcher's own channel, after all of its earlier events: a safe resume point
      if (rev + 1 > st.nextRev) st.nextRev = rev + 1;
      this.announceProgress(st, rev, true);
    }
  }

  private onCreated(st: WatcherState, id: number, rev: number, res: WireWatchResponse): void {
    if (res.canceled) {
      this.finish(st, { kind: 'canceled', compactRevision: num(res.compactRevision), reason: res.cancelReason || 'watch create refused' });
      return;
    }
    if (st.closed) {
      this.write({ cancelRequest: { watchId: id } });
      return;
    }
    st.id = id;
    this.byId.set(id, st);
    if (st.nextRev === 0) {
      // a watch "from now" starts right after the revision in its created header
      st.nextRev = rev + 1;
      st.lastEventRev = rev;
      st.lastAnnouncedRev = rev;
    }
  }

  private deliverEvents(st: WatcherState, res: WireWatchResponse): void {
    const events: EtcdEvent[] = [];
    for (const e of res.events) {
      if (!e.kv) continue;
      const kv = keyValue(e.kv);
      // a repeat of something already delivered (never expected: resumes start after it)
      if (kv.modRevision <= st.lastEventRev) continue;
      events.push({
        type: e.type === EVENT_DELETE ? 'DELETE' : 'PUT',
        kv,
        ...(e.prevKv ? { prevKv: keyValue(e.prevKv) } : {}),
      });
    }
    if (events.length === 0) return;
    // etcd never splits one revision over two responses (we do not ask for fragments), so
    // everything up to the last event's revision has now been delivered. The header revision
    // is no such promise: a catching-up watcher gets batches stamped with the current revision.
    const last = events[events.length - 1]!.kv.modRevision;
    st.lastEventRev = last;
    if (last + 1 > st.nextRev) st.nextRev = last + 1;
    if (last > st.lastAnnouncedRev) st.lastAnnouncedRev = last;
    this.deliver(st, { kind: 'events', revision: last, events });
  }

  private announceProgress(st: WatcherState, rev: number, ordered: boolean): void {
    if (st.closed || rev < st.lastAnnouncedRev) return;
    // an unordered answer is no promise, so it must not hide a later ordered one
    if (ordered) st.lastAnnouncedRev = rev;
    this.deliver(st, { kind: 'progress', revision: rev, ordered });
  }

  private finish(st: WatcherState, msg: WatchMessage): void {
    if (st.closed) return;
    st.closed = true;
    this.deliver(st, msg);
  }

  private deliver(st: WatcherState, msg: WatchMessage): void {
    try {
      st.listener(msg);
    } catch (err) {
      // a throwing listener must not break the stream the other watchers share
      process.emitWarning(`etcd watch listener threw: ${(err as Error)?.stack ?? String(err)}`);
    }
  }

  private dropCall(): void {
    const call = this.call;
    this.call = null;
    this.callEndpoint = null;
    this.generation++;
    call?.cancel();
  }

  private onBroken(raw: unknown, failedEndpoint?: Endpoint): void {
    const ep = failedEndpoint ?? this.callEndpoint;
    this.dropCall();
    if (this.closed) return;
    if (ep && (raw === null || isEndpointFailure(asEtcdError(raw, ep.url)))) this.pool.failed(ep);
    // every live watcher goes back to the queue, in creation order, to be re-created from
    // its next revision on the new stream
    const live = this.liveWatchers();
    this.byId.clear();
    this.creating = null;
    for (const st of live) st.id = null;
    this.queue = live;
    if (live.length === 0) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_BACKOFF_MS.max);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.ensureStream();
      this.pump();
    }, delay);
  }
}
