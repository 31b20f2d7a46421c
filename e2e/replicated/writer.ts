// A writer for the soak: creates, updates and deletes configmaps of its own (names start
// with w<id>-) in a few namespaces, straight at the replicas in turn, and records every write
// with the resourceVersion the server acknowledged. Each writer uses another way to write:
// PUT with resourceVersion, merge patch, PUT without resourceVersion (the server retries
// conflicts itself), strategic merge patch.
//
// A write that did not reach a server (connection refused) is tried again on the next
// replica. A write whose outcome is unknown (connection lost mid-request, 5xx, timeout) is
// recorded as such, and its object is never written again: etcd's history says later
// whether it happened, and a later write cannot blur the answer.

import { performance } from 'node:perf_hooks';
import { KubeHttpClient, type ClientCredentials, type HttpResponse } from '../http-client.js';
import { sleep } from '../harness.js';
import type { WriteRecord } from './history-model.js';

export const GROUP_LABEL = 'soak-group';

export interface WriterOptions {
  id: number;
  creds: ClientCredentials;
  servers: string[];
  namespaces: string[];
  /** label values g0 .. g<groups-1> */
  groups: number;
  /** pause between writes */
  pauseMs: number;
  /** live objects the writer keeps around (creates more while below, deletes above) */
  targetObjects: number;
}

interface Live {
  namespace: string;
  name: string;
  rv: number;
  seq: string;
  labels: Record<string, string>;
}

type Outcome = ({ kind: 'ok'; res: HttpResponse } | { kind: 'unknown'; why: string; res?: HttpResponse }) & {
  sentAt: number;
  doneAt: number;
};

export class Writer {
  readonly records: WriteRecord[] = [];
  /** answers a correct server would not give */
  readonly unexpected: string[] = [];
  retriedUnsent = 0;
  private readonly live = new Map<string, Live>();
  private readonly clients: KubeHttpClient[];
  private attempt = 0;
  private counter = 0;
  private objects = 0;

  constructor(readonly opts: WriterOptions) {
    this.clients = opts.servers.map((server) => new KubeHttpClient({ ...opts.creds, server }, { maxSockets: 2 }));
  }

  get acknowledged(): number {
    return this.records.filter((r) => r.acked).length;
  }

  get unknown(): number {
    return this.records.filter((r) => !r.acked).length;
  }

  close(): void {
    for (const c of this.clients) c.close();
  }

  async run(stop: () => boolean): Promise<void> {
    while (!stop()) {
      await this.step();
      if (this.opts.pauseMs > 0) await sleep(this.opts.pauseMs);
    }
  }

  private rand(n: number): number {
    return Math.floor(Math.random() * n);
  }

  private nextSeq(): string {
    return `w${this.opts.id}-${++this.counter}`;
  }

  private group(): Record<string, string> {
    return { [GROUP_LABEL]: `g${this.rand(this.opts.groups)}` };
  }

  private async step(): Promise<void> {
    const live = [...this.live.values()];
    const r = Math.random();
    if (live.length < this.opts.targetObjects / 2 || (r < 0.25 && live.length < this.opts.targetObjects)) return this.create();
    const obj = live[this.rand(live.length)]!;
    if (r < 0.4 || live.length > this.opts.targetObjects * 1.5) return this.remove(obj);
    return this.update(obj);
  }

  /** sends on the replicas in turn; a refused connection is tried on the next one */
  private async send(method: string, path: string, body?: unknown, contentType?: string): Promise<Outcome> {
    const sentAt = performance.now();
    for (let tries = 0; ; tries++) {
      const client = this.clients[(this.opts.id + this.attempt++) % this.clients.length]!;
      try {
        const res = await client.request(method, path, { body, contentType, timeoutMs: 20_000 });
        const doneAt = performance.now();
        if (res.status >= 200 && res.status < 300) return { kind: 'ok', res, sentAt, doneAt };
        return { kind: 'unknown', why: `HTTP ${res.status}: ${res.body.slice(0, 200)}`, res, sentAt, doneAt };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ECONNREFUSED' && tries < 100) {
          this.retriedUnsent++;
          await sleep(20);
          continue;
        }
        return { kind: 'unknown', why: `${code ?? ''} ${(err as Error).message}`, sentAt, doneAt: performance.now() };
      }
    }
  }

  private rvOf(res: HttpResponse): number {
    return Number((JSON.parse(res.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
  }

  private record(rec: Omit<WriteRecord, 'acked'>, out: Outcome, obj: Live): void {
    const times = { sentAt: out.sentAt, doneAt: out.doneAt };
    if (out.kind === 'ok') {
      if (rec.op !== 'delete') rec.rv = this.rvOf(out.res);
      this.records.push({ ...rec, ...times, acked: true });
      return;
    }
    this.records.push({ ...rec, ...times, acked: false, unknown: out.why });
    // a 4xx other than 429 means the test or the server is wrong, not a fault
    if (out.res && out.res.status >= 400 && out.res.status < 500 && out.res.status !== 429) {
      this.unexpected.push(`writer ${this.opts.id}: ${rec.op} ${obj.namespace}/${obj.name}: ${out.why}`);
    }
    this.live.delete(`${obj.namespace}/${obj.name}`);
  }

  private async create(): Promise<void> {
    const namespace = this.opts.namespaces[this.rand(this.opts.namespaces.length)]!;
    const name = `w${this.opts.id}-${++this.objects}`;
    const seq = this.nextSeq();
    const labels = this.group();
    const out = await this.send('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels },
      data: { seq, pad: 'x'.repeat(this.rand(200)) },
    });
    const obj: Live = { namespace, name, rv: 0, seq, labels };
    this.record({ writer: this.opts.id, op: 'create', namespace, name, seq, labels }, out, obj);
    if (out.kind === 'ok') this.live.set(`${namespace}/${name}`, { ...obj, rv: this.rvOf(out.res) });
  }

  private async update(obj: Live): Promise<void> {
    const seq = this.nextSeq();
    const labels = Math.random() < 0.3 ? this.group() : obj.labels;
    const path = `/api/v1/namespaces/${obj.namespace}/configmaps/${obj.name}`;
    let out: Outcome;
    let op: WriteRecord['op'] = 'update';
    switch (this.opts.id % 4) {
      case 0:
        out = await this.send('PUT', path, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: obj.name, namespace: obj.namespace, labels, resourceVersion: String(obj.rv) },
          data: { seq },
        });
        break;
      case 1:
        op = 'patch';
        out = await this.send('PATCH', path, { metadata: { labels }, data: { seq } }, 'application/merge-patch+json');
        break;
      case 2:
        out = await this.send('PUT', path, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: obj.name, namespace: obj.namespace, labels },
          data: { seq, pad: 'y'.repeat(this.rand(100)) },
        });
        break;
      default:
        op = 'patch';
        out = await this.send('PATCH', path, { metadata: { labels }, data: { seq } }, 'application/strategic-merge-patch+json');
    }
    this.record({ writer: this.opts.id, op, namespace: obj.namespace, name: obj.name, seq, labels }, out, obj);
    if (out.kind === 'ok') Object.assign(obj, { rv: this.rvOf(out.res), seq, labels });
  }

  private async remove(obj: Live): Promise<void> {
    const path = `/api/v1/namespaces/${obj.namespace}/configmaps/${obj.name}`;
    const body =
      this.opts.id % 2 === 0 ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: String(obj.rv) } } : undefined;
    const out = await this.send('DELETE', path, body);
    this.record({ writer: this.opts.id, op: 'delete', namespace: obj.namespace, name: obj.name, seq: obj.seq, prevRv: obj.rv }, out, obj);
    if (out.kind === 'ok') this.live.delete(`${obj.namespace}/${obj.name}`);
  }
}
