// Large YAML bodies are decoded on a thread of their own. The YAML parser reads some 1 MB/s
// (a 2.5 MB body is seconds of CPU on a slow machine): on the event loop that would stall every
// other request of the replica for as long. The thread takes one body at a time, in arrival
// order; what it decoded is kept for the request's Buffer (yaml.ts's decodeYamlBody finds it
// there), so the synchronous decoders after it never parse that body again. The thread starts
// with the first large body and ends after a while without one; its heap is bounded, so a body
// that needs more memory to decode is refused instead of taking the replica's.

import { Worker } from 'node:worker_threads';
import { errors } from '../machinery/status.js';
import { rememberDecodedYaml, type DecodedYaml } from './yaml.js';
import { abortReasonOf } from './cancellation.js';

/** bodies this large go to the thread (smaller ones decode in a few ms) */
export const YAML_THREAD_BYTES = 32 * 1024;

/** the thread's old generation: some 40 bytes per byte of text while it parses a body of at
 *  most a few MB, with room to spare */
const THREAD_HEAP_MIB = 512;

/** how long the thread waits for the next body before it ends */
const IDLE_MS = 30_000;

export interface YamlThreadJob {
  id: number;
  body: Uint8Array;
}

export type YamlThreadAnswer =
  | { id: number; decoded: DecodedYaml }
  /** the decoder's 400, by its message */
  | { id: number; refused: string }
  /** anything else: the main thread decodes the body itself */
  | { id: number; failed: string };

interface Waiting {
  id: number;
  body: Buffer;
  done: () => void;
}

class YamlThread {
  private worker: Worker | undefined;
  private readonly queue: Waiting[] = [];
  private current: Waiting | undefined;
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;

  decode(body: Buffer, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReasonOf(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.queue.indexOf(waiting);
        // a body the thread is decoding is let finish; one still waiting leaves the queue
        if (at >= 0) this.queue.splice(at, 1);
        reject(abortReasonOf(signal!));
      };
      const waiting: Waiting = {
        id: this.nextId++,
        body,
        done: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiting);
      this.pump();
    });
  }

  private pump(): void {
    if (this.current) return;
    const next = this.queue.shift();
    if (!next) {
      // an idle thread keeps no process alive; a busy one does, as any pending I/O
      this.worker?.unref();
      this.idleTimer ??= setTimeout(() => this.stop(), IDLE_MS).unref();
      return;
    }
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    }
    this.current = next;
    const worker = this.thread();
    worker.ref();
    worker.postMessage({ id: next.id, body: next.body } satisfies YamlThreadJob);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./yaml-thread-worker.js', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MIB },
    });
    worker.on('message', (answer: YamlThreadAnswer) => this.answered(answer));
    worker.on('error', (err) => this.lost(worker, err));
    worker.on('exit', () => this.lost(worker, new Error('the YAML thread exited')));
    this.worker = worker;
    return worker;
  }

  private answered(answer: YamlThreadAnswer): void {
    const job = this.current;
    if (!job || job.id !== answer.id) return;
    this.current = undefined;
    if ('decoded' in answer) rememberDecodedYaml(job.body, answer.decoded);
    else if ('refused' in answer) rememberDecodedYaml(job.body, errors.badRequest(answer.refused));
    job.done();
    this.pump();
  }

  /** the thread died (its heap bound, most likely): the body it had is refused, the rest go to
   *  a new thread */
  private lost(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const job = this.current;
    this.current = undefined;
    if (job) {
      // any other loss leaves the body to the main thread's decoder
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        rememberDecodedYaml(job.body, errors.tooLarge('the YAML body needs more memory to decode than a request may use'));
      }
      job.done();
    }
    this.pump();
  }

  private stop(): void {
    this.idleTimer = undefined;
    const worker = this.worker;
    if (!worker || this.current || this.queue.length > 0) return;
    this.worker = undefined;
    void worker.terminate();
  }
}

let shared: YamlThread | undefined;

/** Decodes a YAML body on the YAML thread and keeps the outcome for decodeYamlBody. Resolves
 *  when it is kept (a failure to decode too: that is the body's answer); rejects only when
 *  `signal` ends the request first. */
export function decodeYamlOffThread(body: Buffer, signal?: AbortSignal): Promise<void> {
  shared ??= new YamlThread();
  return shared.decode(body, signal);
}
