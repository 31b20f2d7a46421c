// etcd_request_duration_seconds, etcd_requests_total and etcd_request_errors_total: a wrapper
// around the etcd client the etcd3 store uses, timing each call and naming it as
// kube-apiserver's store does (get, list, create, update, delete, listWithCount) with the
// object type as the group-resource of the key ("configmaps", "deployments.apps").
// Calls on keys outside any served resource (the marker key, allocator keys) are not recorded.

import type { EtcdClient, RangeRequest, TxnRequest } from '../../storage/etcd/types.js';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';
import { CounterSeries, HistogramSeries } from './series.js';

export interface StorageResource {
  /** storage key prefix below the etcd prefix, e.g. `/pods`, `/apps/deployments` */
  keyPrefix: string;
  /** the group-resource label, e.g. `pods`, `deployments.apps` */
  label: string;
}

/** Finds the group-resource label of etcd keys under `etcdPrefix`. */
export class KeyTypes {
  private readonly base: string;
  private readonly byPrefix = new Map<string, string>();

  constructor(etcdPrefix: string, resources: Iterable<StorageResource>) {
    this.base = etcdPrefix.replace(/\/+$/, '') + '/';
    for (const r of resources) this.byPrefix.set(r.keyPrefix.replace(/^\/+|\/+$/g, ''), r.label);
  }

  /** the label of a key, or undefined outside every resource */
  typeOf(key: string): string | undefined {
    if (!key.startsWith(this.base)) return undefined;
    const first = key.indexOf('/', this.base.length);
    if (first < 0) return this.byPrefix.get(key.slice(this.base.length));
    const second = key.indexOf('/', first + 1);
    // a named group's resource is two segments deep, a core resource one
    const two = this.byPrefix.get(key.slice(this.base.length, second < 0 ? key.length : second));
    return two ?? this.byPrefix.get(key.slice(this.base.length, first));
  }
}

/** what kube-apiserver's store calls a range read */
function rangeOperation(req: RangeRequest): string {
  if (req.countOnly && req.rangeEnd) return 'listWithCount';
  return req.rangeEnd ? 'list' : 'get';
}

/** what a write transaction does: create, update, or delete */
function txnOperation(req: TxnRequest): string | undefined {
  const op = req.success[0];
  if (!op) return undefined;
  if ('deleteRange' in op) return 'delete';
  if ('put' in op) {
    // the store's create asks that the key was never created; an update (even one that may
    // create, as a guaranteed update with allowCreate) compares mod revisions
    const create = req.compare.some((c) => (c.target === 'CREATE' || c.target === 'VERSION') && c.result === 'EQUAL' && c.value === 0);
    return create ? 'create' : 'update';
  }
  return undefined;
}

export function instrumentEtcdClient(client: EtcdClient, types: KeyTypes, metrics: ApiserverMetrics = defaultMetrics()): EtcdClient {
  // every write and read passes here: series resolved once per operation and type
  const durations = new HistogramSeries(metrics.etcdRequestDuration);
  const requests = new CounterSeries(metrics.etcdRequests);
  const errors = new CounterSeries(metrics.etcdRequestErrors);

  async function timed<T>(operation: string | undefined, key: Buffer, call: () => Promise<T>, typeFromKey = true): Promise<T> {
    const keyString = key.toString();
    const type = operation === undefined ? undefined : typeFromKey ? types.typeOf(keyString) : types.typeOf(keyString) && keyString;
    if (type === undefined || operation === undefined) return call();
    const started = performance.now();
    let failed = true;
    try {
      const result = await call();
      failed = false;
      return result;
    } finally {
      const series = `${operation} ${type}`;
      const labels = () => ({ operation, type });
      durations.observe(series, labels, (performance.now() - started) / 1000);
      requests.inc(series, labels);
      if (failed) errors.inc(series, labels);
    }
  }

  return {
    range: (req) => {
      const operation = rangeOperation(req);
      // kube-apiserver labels its count calls with the etcd key prefix itself
      return timed(operation, req.key, () => client.range(req), operation !== 'listWithCount');
    },
    rangeAll: (req) => timed('list', req.key, () => client.rangeAll(req)),
    put: (key, value, opts) => timed('update', key, () => client.put(key, value, opts)),
    deleteRange: (key, opts) => timed('delete', key, () => client.deleteRange(key, opts)),
    txn: (req) => {
      const first = req.success[0];
      const key = first ? ('put' in first ? first.put.key : 'deleteRange' in first ? first.deleteRange.key : first.range.key) : undefined;
      return key ? timed(txnOperation(req), key, () => client.txn(req)) : client.txn(req);
    },
    compact: (revision, physical) => client.compact(revision, physical),
    watch: (req, listener) => client.watch(req, listener),
    leaseGrant: (ttl) => client.leaseGrant(ttl),
    leaseRevoke: (id) => client.leaseRevoke(id),
    leaseKeepAliveOnce: (id) => client.leaseKeepAliveOnce(id),
    memberList: () => client.memberList(),
    status: () => client.status(),
    close: () => client.close(),
  };
}
