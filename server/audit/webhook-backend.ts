// The webhook backend (--audit-webhook-*): POSTs audit.k8s.io/v1 EventLists to the server of
// a kubeconfig file. `batch` mode (the default) buffers events and sends a batch when it is
// full or every --audit-webhook-batch-max-wait, never holding a request; `blocking` and
// `blocking-strict` send each stage's event while the request waits. Failed sends are retried
// with exponential backoff from --audit-webhook-initial-backoff (x1.5, 20% jitter, 5 tries,
// as kube-apiserver's DefaultRetryBackoffWithInitialDelay), then dropped with a log line.

import { clientFor, readKubeconfigTarget } from '../kubeconfig/read.js';
import type { AuditBackend, AuditLogger } from './backend.js';
import type { AuditEvent } from './event.js';

export const WEBHOOK_MODES = ['batch', 'blocking', 'blocking-strict'] as const;
export type WebhookMode = (typeof WEBHOOK_MODES)[number];

export interface BatchOptions {
  bufferSize: number;
  maxBatchSize: number;
  maxBatchWaitMs: number;
  throttleEnable: boolean;
  throttleQPS: number;
  throttleBurst: number;
}

export interface WebhookBackendOptions {
  kubeconfigFile: string;
  mode: WebhookMode;
  initialBackoffMs: number;
  batch: BatchOptions;
  logger: AuditLogger;
  /** per call; default 30 s */
  timeoutMs?: number;
}

const RETRY_STEPS = 5;
const RETRY_FACTOR = 1.5;
const RETRY_JITTER = 0.2;
const SHUTDOWN_WAIT_MS = 10_000;

class RetryableError extends Error {}

/** resolves after `ms`, or at once when `signal` aborts */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** a token bucket: `take()` resolves when a send may start */
function throttle(qps: number, burst: number): () => Promise<void> {
  let tokens = burst;
  let last = Date.now();
  return async () => {
    for (;;) {
      const now = Date.now();
      tokens = Math.min(burst, tokens + ((now - last) / 1000) * qps);
      last = now;
      if (tokens >= 1) {
        tokens -= 1;
        return;
      }
      await sleep(Math.ceil(((1 - tokens) / qps) * 1000));
    }
  };
}

export function createWebhookBackend(opts: WebhookBackendOptions): AuditBackend {
  const target = readKubeconfigTarget(opts.kubeconfigFile);
  const { agent, request } = clientFor(target);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  // aborted when shutdown stops waiting: pending retries give up at once
  const stopped = new AbortController();

  const post = (body: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'Content-Length': String(Buffer.byteLength(body)),
      };
      if (target.token) headers.Authorization = `Bearer ${target.token}`;
      const req = request(target.server, { method: 'POST', agent, headers, timeout: timeoutMs }, (res) => {
        res.resume();
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve();
          else if (code === 429 || code >= 500) reject(new RetryableError(`the server answered ${code}`));
          else reject(new Error(`the server answered ${code}`));
        });
        res.on('error', (err) => reject(new RetryableError(err.message)));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs}ms`)));
      req.on('error', (err) => reject(err instanceof RetryableError ? err : new RetryableError(err.message)));
      req.end(body);
    });

  /** sends one EventList with retries; logs and drops it when every try failed (false) */
  async function send(events: readonly AuditEvent[]): Promise<boolean> {
    const body = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: events });
    let delay = opts.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await post(body);
        return true;
      } catch (err) {
        if (!(err instanceof RetryableError) || attempt >= RETRY_STEPS || stopped.signal.aborted) {
          opts.logger.error(`Error in audit plugin 'webhook' affecting ${events.length} audit events`, {
            error: (err as Error).message,
            url: target.server.href,
          });
          return false;
        }
        await sleep(delay * (1 + Math.random() * RETRY_JITTER), stopped.signal);
        delay *= RETRY_FACTOR;
      }
    }
  }

  if (opts.mode !== 'batch') {
    return {
      name: `webhook(${opts.mode})`,
      // blocking: the request waits, whatever the outcome; blocking-strict: a failure fails it
      processEvents: (events) => send(events).then((ok) => opts.mode !== 'blocking-strict' || ok),
      async shutdown() {
        stopped.abort();
        agent.destroy();
      },
    };
  }

  const b = opts.batch;
  const take = b.throttleEnable ? throttle(b.throttleQPS, b.throttleBurst) : async () => undefined;
  let buffer: AuditEvent[] = [];
  let dropped = 0;
  const inFlight = new Set<Promise<void>>();

  function flush(): void {
    while (buffer.length > 0) {
      const batch = buffer.slice(0, b.maxBatchSize);
      buffer = buffer.slice(batch.length);
      const p: Promise<void> = take()
        .then(() => send(batch))
        .then(() => undefined)
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }

  const timer = setInterval(flush, Math.max(1, b.maxBatchWaitMs));
  timer.unref();

  return {
    name: 'webhook(batch)',
    processEvents(events) {
      for (const ev of events) {
        if (buffer.length >= b.bufferSize) {
          if (dropped++ % 1000 === 0) opts.logger.error('audit webhook buffer full; dropping events', { dropped });
          continue;
        }
        buffer.push(ev);
      }
      if (buffer.length >= b.maxBatchSize) flush();
    },
    async shutdown() {
      clearInterval(timer);
      flush();
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...inFlight]),
        new Promise<void>((resolve) => {
          timeout = setTimeout(resolve, SHUTDOWN_WAIT_MS);
        }),
      ]);
      clearTimeout(timeout);
      // whatever is still being sent or retried gives up now
      stopped.abort();
      agent.destroy();
      await Promise.all([...inFlight]);
    },
  };
}
