// API Priority and Fairness for one replica: the current FlowSchemas and priority levels
// (replaced whole whenever the objects change), classification, and one QueueSet per Limited
// level. The server's concurrency (--max-requests-inflight + --max-mutating-requests-inflight)
// is shared among the levels by nominalConcurrencyShares; lending and borrowing between
// levels (lendablePercent, borrowingLimitPercent) are not modelled.

import { createHash } from 'node:crypto';
import type { KubeObject } from '../../storage/interface.js';
import { nameAndGroupsKey } from '../machinery/user.js';
import { CATCH_ALL, EXEMPT, mandatoryFlowSchemas, mandatoryPriorityLevels } from './bootstrap.js';
import { classify, flowDistinguisher, sortFlowSchemas, type RequestDigest } from './classifier.js';
import { parseFlowSchema, parsePriorityLevel, type FlowSchemaConfig, type PriorityLevelConfig } from './config.js';
import { QueueSet, type QueueSetStats } from './queueset.js';
import { DroppedRequests } from './retry-after.js';

export interface Classification {
  flowSchema: string;
  flowSchemaUID: string;
  priorityLevel: string;
  priorityLevelUID: string;
  exempt: boolean;
}

export type Admission =
  | { admitted: true; classification: Classification; release: () => void }
  | { admitted: false; classification: Classification; reason: 'rejected' | 'timeout' | 'cancelled'; retryAfterSeconds: number };

export interface FlowControllerOptions {
  /** --max-requests-inflight + --max-mutating-requests-inflight */
  serverConcurrencyLimit: number;
  /** longest wait in a queue before a 429 (kube: a quarter of --request-timeout); 0: none */
  maxQueueWaitMs?: number;
}

export interface PriorityLevelStatus {
  name: string;
  exempt: boolean;
  /** no FlowSchema leads here any more; kept until its requests are done */
  draining: boolean;
  /** absent for exempt levels, which neither limit nor queue */
  concurrencyLimit?: number;
  executing?: number;
  waiting?: number;
  /** requests waiting in each queue; empty for a Reject level */
  queueLengths?: number[];
}

interface Level {
  config: PriorityLevelConfig;
  queues?: QueueSet;
}

/** a stable number for a flow, so one flow keeps being dealt the same queues */
function flowHash(flowSchema: string, distinguisher: string): number {
  return createHash('sha256').update(flowSchema).update('\0').update(distinguisher).digest().readUIntBE(0, 6);
}

const noRelease = (): void => {};

/** classifications remembered per configuration; past this many the memory starts over */
const MAX_REMEMBERED_MATCHES = 10_000;

/** everything a FlowSchema rule can match on: the user's name and groups and the request */
function digestKey(d: RequestDigest): string {
  const who = nameAndGroupsKey(d.user);
  const i = d.info;
  if (!i.isResourceRequest) return `n\0${who}\0${i.verb}\0${i.path}`;
  return `r\0${who}\0${i.verb}\0${i.apiGroup}\0${i.resource}\0${i.subresource}\0${i.namespace}`;
}

export class FlowController {
  private schemas: FlowSchemaConfig[] = [];
  /** the schema each kind of request matched, under the current configuration */
  private readonly matched = new Map<string, FlowSchemaConfig>();
  private levels = new Map<string, Level>();
  /** levels no FlowSchema leads to any more, kept until their requests are done */
  private draining = new Map<string, Level>();
  private dangling = new Map<string, boolean>();
  private readonly dropped = new DroppedRequests();

  constructor(private readonly opts: FlowControllerOptions) {
    this.update([], []);
  }

  /** Installs a new configuration from the objects as stored. */
  update(flowSchemaObjects: readonly KubeObject[], priorityLevelObjects: readonly KubeObject[]): void {
    const configs = new Map<string, PriorityLevelConfig>();
    for (const o of priorityLevelObjects) {
      const c = parsePriorityLevel(o);
      if (c) configs.set(c.name, c);
    }
    // the mandatory levels exist even when their objects do not (yet)
    for (const o of mandatoryPriorityLevels()) {
      const name = o.metadata.name!;
      if (!configs.has(name)) configs.set(name, { ...parsePriorityLevel(o)!, uid: '' });
    }
    const shareSum = [...configs.values()].reduce((n, c) => n + c.nominalConcurrencyShares, 0);
    const total = this.opts.serverConcurrencyLimit;
    const next = new Map<string, Level>();
    for (const c of configs.values()) {
      const limit = Math.max(1, Math.ceil((total * c.nominalConcurrencyShares) / Math.max(1, shareSum)));
      const old = this.levels.get(c.name) ?? this.draining.get(c.name);
      this.draining.delete(c.name);
      let queues = old?.queues;
      if (c.exempt) queues = undefined;
      else if (queues) queues.configure(limit, c.queuing);
      else queues = new QueueSet(limit, c.queuing);
      next.set(c.name, { config: c, queues });
    }
    for (const [name, old] of this.levels) {
      if (!next.has(name) && old.queues && !old.queues.idle) this.draining.set(name, old);
    }
    this.levels = next;

    const schemas: FlowSchemaConfig[] = [];
    const dangling = new Map<string, boolean>();
    for (const o of flowSchemaObjects) {
      const fs = parseFlowSchema(o);
      if (!fs) continue;
      const missing = !next.has(fs.priorityLevel);
      dangling.set(fs.name, missing);
      if (!missing) schemas.push(fs);
    }
    let sorted = sortFlowSchemas(schemas);
    const [exemptFS, catchAllFS] = mandatoryFlowSchemas().map((o) => ({ ...parseFlowSchema(o)!, uid: '' }));
    if (!sorted.some((s) => s.name === EXEMPT)) sorted = [exemptFS!, ...sorted];
    if (!sorted.some((s) => s.name === CATCH_ALL)) sorted = [...sorted, catchAllFS!];
    this.schemas = sorted;
    this.dangling = dangling;
    this.matched.clear();
  }

  /** per FlowSchema object: true when its priority level does not exist */
  danglingSchemas(): ReadonlyMap<string, boolean> {
    return this.dangling;
  }

  classify(d: RequestDigest): { classification: Classification; distinguisher: string; level: Level } {
    const key = digestKey(d);
    let fs = this.matched.get(key);
    if (!fs) {
      fs = classify(this.schemas, d) ?? this.schemas.find((s) => s.name === CATCH_ALL)!;
      if (this.matched.size >= MAX_REMEMBERED_MATCHES) this.matched.clear();
      this.matched.set(key, fs);
    }
    const level = this.levels.get(fs.priorityLevel)!;
    return {
      classification: {
        flowSchema: fs.name,
        flowSchemaUID: fs.uid,
        priorityLevel: level.config.name,
        priorityLevelUID: level.config.uid,
        exempt: level.config.exempt,
      },
      distinguisher: flowDistinguisher(fs, d),
      level,
    };
  }

  /** Classifies the request and waits for a seat at its level; an exempt request is admitted
   *  at once, without a promise (most of a cluster admin's requests). */
  admit(d: RequestDigest, signalOf?: () => AbortSignal): Admission | Promise<Admission> {
    const { classification, distinguisher, level } = this.classify(d);
    if (!level.queues) return { admitted: true, classification, release: noRelease };
    return this.queue(level.queues, classification, distinguisher, signalOf);
  }

  private async queue(
    queues: QueueSet,
    classification: Classification,
    distinguisher: string,
    signalOf?: () => AbortSignal,
  ): Promise<Admission> {
    const outcome = await queues.acquire(() => flowHash(classification.flowSchema, distinguisher), signalOf, this.opts.maxQueueWaitMs);
    if (outcome.admitted) {
      const release = () => {
        outcome.release();
        this.forgetDrained();
      };
      return { admitted: true, classification, release };
    }
    this.forgetDrained();
    if (outcome.reason !== 'cancelled') this.dropped.record(classification.priorityLevel);
    return {
      admitted: false,
      classification,
      reason: outcome.reason,
      retryAfterSeconds: this.dropped.retryAfter(classification.priorityLevel),
    };
  }

  /** every priority level now, draining ones too (the status page) */
  levelsStatus(): PriorityLevelStatus[] {
    const out: PriorityLevelStatus[] = [];
    for (const [draining, levels] of [
      [false, this.levels],
      [true, this.draining],
    ] as const) {
      for (const [name, l] of levels) {
        out.push({
          name,
          exempt: l.config.exempt,
          draining,
          ...(l.queues ? { ...l.queues.stats, queueLengths: l.queues.queueLengths() } : {}),
        });
      }
    }
    return out;
  }

  levelStats(name: string): QueueSetStats | undefined {
    return (this.levels.get(name) ?? this.draining.get(name))?.queues?.stats;
  }

  private forgetDrained(): void {
    for (const [name, l] of this.draining) if (l.queues?.idle) this.draining.delete(name);
  }
}
