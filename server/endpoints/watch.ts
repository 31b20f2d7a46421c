// Watch: a stream of change events, one JSON document per line, flushed per event. Ends when
// the client goes away, when timeoutSeconds (or a random 1-2x the minimum request timeout)
// passes, or when the storage watch ends.

import type { Watch, WatchEvent } from '../../storage/interface.js';
import { encodeJson } from '../request/encode.js';
import { encodeCbor } from '../cbor/index.js';
import { protobufWatchFrame } from '../protobuf/http.js';
import type { OutputMediaType } from '../request/negotiation.js';
import { beginStream, responseFinished } from '../request/response.js';
import { toStatusError } from '../machinery/status.js';
import type { HttpResponse } from '../request/types.js';
import { applyNameToListOptions, readListOptions, validateWatchOptions, watchRequestOptions } from './options.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { partialObjectMetadata, toTable, type TableOptions } from './table.js';
import { rowObjectKind, tableOptionsFor } from './transform.js';
import { sharedFrame } from './watch-frames.js';
import { defaultMetrics } from '../metrics/apiserver-metrics.js';
import { createLogger, getVerbosity } from '../log.js';

const log = createLogger('kapi');

/** Encodes events for one watch: converts objects to what the client asked for (a Table
 *  carries column definitions only in the first event, as kube-apiserver sends it). */
export class WatchEventEncoder {
  private headersSent = false;

  constructor(
    private readonly scope: Scope,
    private readonly media: OutputMediaType,
    private readonly tableOptions: TableOptions | undefined,
  ) {}

  encode(event: WatchEvent): string | Buffer {
    const shareAs = this.sharedEncoding(event);
    return shareAs ? sharedFrame(event, shareAs, () => this.encodeOwn(event)) : this.encodeOwn(event);
  }

  /** the cache key under which this stream's frame of `event` equals every other stream's
   *  with the same key, or undefined when the frame is this stream's own (bookmarks and
   *  errors are made per watcher; a Table's first frame carries column headers) */
  private sharedEncoding(event: WatchEvent): string | undefined {
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED') return undefined;
    if (typeof event.object?.kind !== 'string') return undefined;
    const convert = this.media.convert;
    if (!convert) return this.media.format;
    if (convert.kind === 'PartialObjectMetadata') return `${this.media.format};as=PartialObjectMetadata;v=${convert.version}`;
    return undefined;
  }

  private encodeOwn(event: WatchEvent): string | Buffer {
    const object = this.embedded(event);
    // objects without kind (bookmarks) are of the endpoint's kind
    if (this.media.format === 'protobuf') return protobufWatchFrame(event.type, object, this.scope.kind);
    // one self-described data item per event: application/cbor-seq
    if (this.media.format === 'cbor') return encodeCbor({ type: event.type, object });
    return encodeJson({ type: event.type, object });
  }

  private embedded(event: WatchEvent): unknown {
    const convert = this.media.convert;
    if (!convert || event.type === 'ERROR' || event.object?.kind === 'Status') return event.object;
    try {
      switch (convert.kind) {
        case 'Table': {
          const convertor = this.scope.config.tableConvertorFor(this.scope.resource);
          if (!convertor || !this.tableOptions) return event.object;
          const table = toTable(
            event.object,
            convertor,
            { ...this.tableOptions, noHeaders: this.headersSent },
            convert.version,
            Date.now(),
            rowObjectKind(this.scope.kind),
          );
          this.headersSent = true;
          return table;
        }
        case 'PartialObjectMetadata':
          return partialObjectMetadata(event.object, convert.version);
        default:
          // kube-apiserver sends the object as it is when it cannot be converted
          return event.object;
      }
    } catch {
      return event.object;
    }
  }
}

/** the watch timeout: timeoutSeconds when given, else a random 1-2x the minimum request timeout */
export function watchTimeoutMs(timeoutSeconds: number | undefined, minRequestTimeoutSeconds: number): number {
  if (timeoutSeconds !== undefined && timeoutSeconds !== 0) return Math.max(0, timeoutSeconds * 1000);
  // floor, as Go's conversion to a Duration truncates: never the excluded 2x itself
  return Math.floor(minRequestTimeoutSeconds * (1 + Math.random()) * 1000);
}

/**
 * Waits that end early when the watch stops (client gone, timeout, shutdown). One stop promise
 * raced against every event would collect a reaction per event for the watch's whole life, so
 * each wait instead leaves its own resolver here for the stop to call.
 */
class StopWaits {
  stopped = false;
  private wake: ((v: 'stop') => void) | undefined;

  constructor(signal: AbortSignal) {
    if (signal.aborted) this.stopped = true;
    else signal.addEventListener('abort', () => this.stop(), { once: true });
  }

  private stop(): void {
    this.stopped = true;
    this.wake?.('stop');
  }

  next<T>(pending: Promise<T>): Promise<T | 'stop'> {
    if (this.stopped) return Promise.resolve('stop');
    return new Promise<T | 'stop'>((resolve, reject) => {
      this.wake = resolve;
      pending.then(resolve, reject);
    });
  }

  drained(res: HttpResponse): Promise<'drain' | 'stop'> {
    return this.next(new Promise<'drain'>((resolve) => res.once('drain', () => resolve('drain'))));
  }
}

export async function serveWatch(scope: Scope): Promise<void> {
  // kube-apiserver validates the options before it negotiates the response
  const opts = readListOptions(scope.state.query);
  opts.watch = true;
  validateWatchOptions(opts, scope.config.watchListEnabled);
  const media = negotiateFor(scope, true);
  applyNameToListOptions(opts, scope.name, scope.info.verbViaPathPrefix && scope.info.parts.length >= 2);
  const tableOptions = tableOptionsFor(scope, media);

  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), watchTimeoutMs(opts.timeoutSeconds, scope.config.minRequestTimeoutSeconds));
  timer.unref?.();
  const signals = [scope.state.signal, timeout.signal];
  if (scope.config.shutdownSignal) signals.push(scope.config.shutdownSignal);
  const signal = AbortSignal.any(signals);
  const ctx = requestContext(scope, { signal });
  const encoder = new WatchEventEncoder(scope, media, tableOptions);
  const res = scope.state.res;

  let watch: Watch;
  try {
    watch = await scope.resource.watch(ctx, watchRequestOptions(opts));
  } catch (err) {
    clearTimeout(timer);
    const status = toStatusError(err, scope.ref);
    if (status.code !== 410) throw status;
    // an expired resource version is a stream with one ERROR event, as the watch cache answers
    beginStream(scope.state, 200, media.contentType);
    res.end(encoder.encode({ type: 'ERROR', object: status.toStatus() as unknown as WatchEvent['object'] }));
    return;
  }

  const waits = new StopWaits(signal);
  const iterator = watch[Symbol.asyncIterator]();
  // -v 3: what each watch wrote, beside the watch cache's word on how it served it
  const tally = getVerbosity() >= 3 ? { events: 0, first: '' } : undefined;
  // apiserver_watch_events_total / _sizes, by the endpoint's kind
  const recordEvent = defaultMetrics().watchEventRecorder(scope.kind);
  try {
    beginStream(scope.state, 200, media.contentType);
    for (;;) {
      const next = await waits.next(iterator.next());
      if (next === 'stop' || next.done || responseFinished(res)) break;
      if (tally && next.value.type !== 'BOOKMARK' && tally.events++ === 0) tally.first = next.value.object?.metadata?.resourceVersion ?? '';
      const frame = encoder.encode(next.value);
      recordEvent(typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length);
      if (!res.write(frame)) {
        if ((await waits.drained(res)) === 'stop') break;
      }
    }
  } catch (err) {
    // the storage watch failed mid-stream: tell the client in-band, as an ERROR event
    if (!responseFinished(res)) {
      res.write(encoder.encode({ type: 'ERROR', object: toStatusError(err, scope.ref).toStatus() as unknown as WatchEvent['object'] }));
    }
  } finally {
    clearTimeout(timer);
    if (tally) {
      log.info('watch ended', {
        path: scope.state.path,
        resourceVersion: opts.resourceVersion ?? '',
        http: scope.state.req.httpVersion,
        events: tally.events,
        firstEventResourceVersion: tally.first,
      });
    }
    watch.stop();
    iterator.return?.()?.catch(() => {});
    if (!responseFinished(res)) res.end();
  }
}
