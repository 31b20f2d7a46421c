// The watch scenario's load: W kapi watches (HTTP/1.1, one connection each, or HTTP/2, 100
// streams per session) or W etcd watchers, while one key changes R times a second. Every
// change carries a sequence number; each watcher's arrival of it is one delivery.

import http2 from 'node:http2';
import https from 'node:https';
import { performance } from 'node:perf_hooks';

const SEQ_MARK = '"seq":"';

/** records, per sequence number, when it was written and when each watcher saw it */
export class DeliveryLog {
  private readonly writtenAt = new Map<number, number>();
  readonly latencies: number[] = [];
  delivered = 0;

  written(seq: number, at: number): void {
    this.writtenAt.set(seq, at);
  }

  arrived(seq: number): void {
    const t0 = this.writtenAt.get(seq);
    if (t0 === undefined) return; // a probe or a change from before the measurement
    this.delivered++;
    this.latencies.push(performance.now() - t0);
  }
}

/** the sequence number in a serialized change, or undefined */
export function seqOf(text: string): number | undefined {
  const at = text.indexOf(SEQ_MARK);
  if (at < 0) return undefined;
  const end = text.indexOf('"', at + SEQ_MARK.length);
  return Number(text.slice(at + SEQ_MARK.length, end));
}

/** feeds newline-delimited watch output; reports each line's sequence number */
function lineScanner(onSeq: (seq: number) => void): (chunk: string) => void {
  let partial = '';
  return (chunk) => {
    const text = partial + chunk;
    let from = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', from)) >= 0) {
      const seq = seqOf(text.slice(from, nl));
      if (seq !== undefined) onSeq(seq);
      from = nl + 1;
    }
    partial = text.slice(from);
  };
}

export interface WatchTarget {
  url: string;
  ca: Buffer;
  token: string;
}

/** opens `count` kapi watches of `path`; resolves once every one has answered 200 */
export async function openKapiWatches(
  target: WatchTarget,
  transport: 'h1' | 'h2',
  count: number,
  path: string,
  onSeq: (seq: number) => void,
): Promise<{ close(): void }> {
  const ready: Promise<void>[] = [];
  const authorization = `Bearer ${target.token}`;
  if (transport === 'h2') {
    const sessions: http2.ClientHttp2Session[] = [];
    for (let i = 0; i < count; i++) {
      if (i % 100 === 0) {
        const s = http2.connect(target.url, { ca: target.ca });
        s.on('error', () => {});
        sessions.push(s);
      }
      const req = sessions.at(-1)!.request({ ':method': 'GET', ':path': path, accept: 'application/json', authorization });
      req.setEncoding('utf8');
      req.on('data', lineScanner(onSeq));
      ready.push(
        new Promise((resolve, reject) => {
          req.on('response', (h) => (h[':status'] === 200 ? resolve() : reject(new Error(`watch answered ${h[':status']}`))));
          req.on('error', reject);
        }),
      );
    }
    await Promise.all(ready);
    return { close: () => sessions.forEach((s) => s.destroy()) };
  }
  const agent = new https.Agent({ keepAlive: true, maxSockets: Infinity, ca: target.ca });
  const url = new URL(target.url);
  for (let i = 0; i < count; i++) {
    const req = https.request({
      agent,
      hostname: url.hostname,
      port: url.port,
      path,
      headers: { accept: 'application/json', authorization },
    });
    ready.push(
      new Promise((resolve, reject) => {
        req.on('response', (res) => {
          if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
          res.setEncoding('utf8');
          res.on('data', lineScanner(onSeq));
          res.on('error', () => {});
          resolve();
        });
        req.on('error', reject);
      }),
    );
    req.end();
  }
  await Promise.all(ready);
  return { close: () => agent.destroy() };
}

/** writes seq 1..rate*seconds at `rate` per second (on a schedule, not back to back) */
export async function writeAtRate(rate: number, seconds: number, log: DeliveryLog, write: (seq: number) => Promise<void>): Promise<number> {
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let seq = 1; seq <= total; seq++) {
    const due = start + ((seq - 1) * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    log.written(seq, performance.now());
    pending.push(write(seq));
  }
  await Promise.all(pending);
  return total;
}
