// A list-then-watch client shaped like client-go's reflector, over raw HTTP, that records
// everything it sees for later validation: the initial list, every event and bookmark, and
// every watch stream (which replica, from which resourceVersion, how it ended).
//
// When a stream ends, cleanly or not, it watches again from the last resourceVersion it saw
// (an event's or a bookmark's), on the next replica. Unlike client-go it never relists: an
// answer of 410 Gone is recorded as a problem and the reflector stops, because in the tests
// that use it nothing was compacted.

import type { ClientCredentials } from '../http-client.js';
import { KubeHttpClient } from '../http-client.js';
import { sleep } from '../harness.js';
import { openWatch, type Http2Sessions, type RawWatch, type StreamEnd, type WatchEventJson } from './watch-client.js';

export interface ObjectView {
  namespace: string;
  name: string;
  rv: number;
  data: Record<string, string>;
  labels: Record<string, string>;
}

export interface ObservedEvent extends ObjectView {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** index into `streams` */
  stream: number;
}

export interface StreamRecord {
  server: string;
  fromRv: number;
  /** Date.now() when the watch request was sent */
  startedAt: number;
  status: number;
  end?: StreamEnd;
  events: number;
  bookmarks: number;
  /** an ERROR event the stream carried */
  error?: WatchEventJson['object'];
  /** the body of a non-200 answer */
  body?: string;
}

export interface ReflectorOptions {
  name: string;
  creds: ClientCredentials;
  /** replica URLs; the reflector moves to the next one whenever a stream ends */
  servers: string[];
  firstServer?: number;
  /** the collection path, e.g. /api/v1/namespaces/a/configmaps */
  path: string;
  labelSelector?: string;
  http2?: Http2Sessions;
  /** timeoutSeconds of each watch request (undefined: none, the server picks) */
  timeoutSeconds?: () => number | undefined;
  /** pause after a failed attempt; default 100 ms */
  retryDelayMs?: number;
  /** get the initial state from a watch (sendInitialEvents=true, consistent) instead of a
   *  LIST: the ADDED events up to the initial-events-end bookmark, as client-go's WatchList */
  watchList?: boolean;
}

export function viewOf(obj: WatchEventJson['object']): ObjectView {
  const meta = obj.metadata ?? {};
  return {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    rv: Number(meta.resourceVersion),
    data: obj.data ?? {},
    labels: meta.labels ?? {},
  };
}

export class Reflector {
  listRv = 0;
  listItems: ObjectView[] = [];
  readonly events: ObservedEvent[] = [];
  /** resourceVersions of bookmarks, in arrival order, with the number of events before each */
  readonly bookmarks: { rv: number; afterEvents: number }[] = [];
  readonly streams: StreamRecord[] = [];
  /** anything a correct server would not do */
  readonly problems: string[] = [];
  /** 410 answers (status or ERROR event) */
  expired = 0;
  lastRv = 0;
  private server: number;
  private stopped = false;
  private current: RawWatch | undefined;
  private listeners: (() => void)[] = [];
  private loop: Promise<void> | undefined;
  /** while set (watchList), the stream is delivering the initial state */
  private initial: { items: ObjectView[]; done: () => void } | undefined;
  /** while set, the reflector does not watch (a client that went away for a while) */
  private paused: Promise<void> | undefined;
  private unpause: (() => void) | undefined;

  constructor(readonly opts: ReflectorOptions) {
    this.server = opts.firstServer ?? 0;
  }

  /** lists, then watches until stop(); resolves once the initial state is known */
  async start(): Promise<void> {
    if (!this.opts.watchList) {
      await this.list();
      this.loop = this.watchLoop();
      return;
    }
    this.initial = { items: [], done: undefined! };
    const done = new Promise<void>((resolve) => (this.initial!.done = resolve));
    this.loop = this.watchLoop();
    await done;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unpause?.();
    this.current?.close();
    await this.loop;
  }

  /** closes the stream and watches no more until resume() */
  pause(): void {
    if (this.paused) return;
    this.paused = new Promise((resolve) => (this.unpause = resolve));
    this.current?.close();
  }

  /** watches again from the last resourceVersion seen, first on `servers[server]` */
  resume(server: number): void {
    this.server = server;
    const unpause = this.unpause;
    this.paused = undefined;
    this.unpause = undefined;
    unpause?.();
  }

  /** resolves once `pred` holds (checked after every event), or rejects after `timeoutMs` */
  async waitUntil(what: string, pred: () => boolean, timeoutMs = 30_000): Promise<void> {
    if (pred()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((l) => l !== check);
        reject(new Error(`${this.opts.name}: timed out waiting for ${what} (last rv ${this.lastRv}, ${this.events.length} events)`));
      }, timeoutMs);
      const check = () => {
        if (!pred()) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== check);
        resolve();
      };
      this.listeners.push(check);
    });
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }

  private query(extra: Record<string, string>): string {
    const q = new URLSearchParams();
    if (this.opts.labelSelector) q.set('labelSelector', this.opts.labelSelector);
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    return `${this.opts.path}?${q.toString()}`;
  }

  private nextServer(): string {
    const s = this.opts.servers[this.server % this.opts.servers.length]!;
    this.server++;
    return s;
  }

  private async list(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      const server = this.nextServer();
      const client = new KubeHttpClient({ ...this.opts.creds, server });
      try {
        const res = await client.get(this.query({}), { timeoutMs: 15_000 });
        if (res.status === 200) {
          const body = JSON.parse(res.body) as { metadata: { resourceVersion: string }; items: WatchEventJson['object'][] };
          this.listRv = Number(body.metadata.resourceVersion);
          this.lastRv = this.listRv;
          this.listItems = body.items.map(viewOf);
          return;
        }
        if (attempt > 50) throw new Error(`${this.opts.name}: list failed: HTTP ${res.status} ${res.body.slice(0, 300)}`);
      } catch (err) {
        if (attempt > 50) throw err;
      } finally {
        client.close();
      }
      await sleep(this.opts.retryDelayMs ?? 100);
    }
  }

  private async watchLoop(): Promise<void> {
    while (!this.stopped) {
      if (this.paused) {
        await this.paused;
        continue;
      }
      const server = this.nextServer();
      const params: Record<string, string> = { watch: '1', allowWatchBookmarks: 'true' };
      if (this.initial) {
        // a consistent initial state: resourceVersion unset
        this.initial.items = [];
        params.sendInitialEvents = 'true';
        params.resourceVersionMatch = 'NotOlderThan';
      } else {
        params.resourceVersion = String(this.lastRv);
      }
      const timeout = this.opts.timeoutSeconds?.();
      if (timeout !== undefined) params.timeoutSeconds = String(timeout);
      const record: StreamRecord = { server, fromRv: this.lastRv, startedAt: Date.now(), status: 0, events: 0, bookmarks: 0 };
      const streamIndex = this.streams.push(record) - 1;
      const w = openWatch({
        creds: this.opts.creds,
        server,
        path: this.query(params),
        http2: this.opts.http2,
        onEvent: (ev) => this.onEvent(ev, record, streamIndex),
      });
      this.current = w;
      record.status = await w.status;
      record.end = await w.ended;
      this.current = undefined;
      if (record.status !== 200 && record.status !== 0) {
        record.body = w.errorBody().slice(0, 500);
        if (record.status === 410) {
          this.expired++;
          this.problems.push(`${this.opts.name}: watch from ${record.fromRv} on ${server} answered 410: ${record.body}`);
          return;
        }
      }
      if (record.error) {
        if (record.error.code === 410) {
          this.expired++;
          this.problems.push(`${this.opts.name}: watch from ${record.fromRv} on ${server} got ERROR 410: ${record.error.message}`);
          return;
        }
        this.problems.push(`${this.opts.name}: ERROR event from ${server}: ${JSON.stringify(record.error)}`);
      }
      if (this.stopped) return;
      if (record.end?.kind === 'closed') continue; // paused
      // a stream that never got going: do not spin while a replica is down
      if (record.status !== 200 || (record.events === 0 && record.bookmarks === 0 && record.end?.kind === 'cut')) {
        await sleep(this.opts.retryDelayMs ?? 100);
      }
    }
  }

  private onEvent(ev: WatchEventJson, record: StreamRecord, stream: number): void {
    const initial = this.initial;
    if (initial) {
      if (ev.type === 'ADDED') {
        initial.items.push(viewOf(ev.object));
        return;
      }
      if (ev.type === 'BOOKMARK' && ev.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true') {
        this.listRv = Number(ev.object.metadata.resourceVersion);
        this.lastRv = this.listRv;
        this.listItems = initial.items;
        this.initial = undefined;
        record.bookmarks++;
        initial.done();
        this.notify();
        return;
      }
      if (ev.type !== 'ERROR') {
        this.problems.push(`${this.opts.name}: ${ev.type} among the initial events: ${JSON.stringify(ev).slice(0, 300)}`);
        return;
      }
    }
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        const view = viewOf(ev.object);
        this.events.push({ type: ev.type, stream, ...view });
        record.events++;
        if (Number.isSafeInteger(view.rv)) this.lastRv = view.rv;
        else this.problems.push(`${this.opts.name}: event without a numeric resourceVersion: ${JSON.stringify(ev).slice(0, 300)}`);
        break;
      }
      case 'BOOKMARK': {
        const rv = Number(ev.object.metadata?.resourceVersion);
        record.bookmarks++;
        this.bookmarks.push({ rv, afterEvents: this.events.length });
        if (!Number.isSafeInteger(rv)) this.problems.push(`${this.opts.name}: bookmark without a numeric resourceVersion`);
        else if (rv < this.lastRv) this.problems.push(`${this.opts.name}: bookmark at ${rv} after ${this.lastRv} (stream ${stream})`);
        else this.lastRv = rv;
        break;
      }
      case 'ERROR':
        record.error = ev.object;
        break;
      default:
        this.problems.push(`${this.opts.name}: unexpected event ${JSON.stringify(ev).slice(0, 300)}`);
    }
    this.notify();
  }
}
