// A reader for the soak: consistent LISTs of one namespace at a time, on the replicas in
// turn, recorded with when they were sent and answered. The checker then asks of every
// answer what a linearizable read must satisfy: it is exactly the state at its
// resourceVersion, and that resourceVersion is not older than any write acknowledged before
// the read was sent (on whichever replica).

import { performance } from 'node:perf_hooks';
import { KubeHttpClient, type ClientCredentials } from '../http-client.js';
import { sleep } from '../harness.js';

export interface ReadRecord {
  server: string;
  namespace: string;
  /** performance.now() when sent and when answered */
  sentAt: number;
  doneAt: number;
  /** HTTP status; 0: no answer */
  status: number;
  rv?: number;
  items?: { name: string; rv: number; seq?: string }[];
  error?: string;
}

export interface ReaderOptions {
  creds: ClientCredentials;
  servers: string[];
  namespaces: string[];
  pauseMs: number;
  first?: number;
}

export class Reader {
  readonly records: ReadRecord[] = [];
  private readonly clients: KubeHttpClient[];
  private turn: number;

  constructor(readonly opts: ReaderOptions) {
    this.clients = opts.servers.map((server) => new KubeHttpClient({ ...opts.creds, server }, { maxSockets: 1 }));
    this.turn = opts.first ?? 0;
  }

  close(): void {
    for (const c of this.clients) c.close();
  }

  async run(stop: () => boolean): Promise<void> {
    while (!stop()) {
      await this.readOnce();
      await sleep(this.opts.pauseMs);
    }
  }

  private async readOnce(): Promise<void> {
    const i = this.turn++;
    const client = this.clients[i % this.clients.length]!;
    const namespace = this.opts.namespaces[Math.floor(i / this.clients.length) % this.opts.namespaces.length]!;
    const rec: ReadRecord = {
      server: this.opts.servers[i % this.clients.length]!,
      namespace,
      sentAt: performance.now(),
      doneAt: 0,
      status: 0,
    };
    try {
      const res = await client.get(`/api/v1/namespaces/${namespace}/configmaps`, { timeoutMs: 20_000 });
      rec.doneAt = performance.now();
      rec.status = res.status;
      if (res.status === 200) {
        const list = JSON.parse(res.body) as {
          metadata: { resourceVersion: string };
          items: { metadata: { name: string; resourceVersion: string }; data?: { seq?: string } }[];
        };
        rec.rv = Number(list.metadata.resourceVersion);
        rec.items = list.items.map((it) => ({ name: it.metadata.name, rv: Number(it.metadata.resourceVersion), seq: it.data?.seq }));
      } else {
        rec.error = res.body.slice(0, 200);
      }
    } catch (err) {
      rec.doneAt = performance.now();
      rec.error = (err as Error).message;
    }
    this.records.push(rec);
  }
}
