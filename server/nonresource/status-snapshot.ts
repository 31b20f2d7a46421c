// What /status reports, gathered only when someone asks: the cluster's replicas (from their
// identity Leases), this replica's requests, watch cache and priority levels, and etcd. Nothing
// here runs between two looks, so the page costs nothing while nobody watches it.

import type { Lease } from '../controllers/leases.js';
import type { PriorityLevelStatus } from '../flowcontrol/controller.js';
import type { ResourceCacheStats } from '../../storage/cacher/feed.js';
import type { EndpointStatus, Member } from '../../storage/etcd/types.js';

/** A replica's identity Lease is renewed every 10 s; one not renewed for this long has stopped
 *  (kube keeps such a Lease for an hour, so its mere presence says nothing). */
export const REPLICA_DOWN_AFTER_MS = 25_000;

export interface ReplicaStatus {
  /** the identity Lease's name: stable across the replica's restarts */
  leaseName: string;
  holderIdentity: string;
  hostname: string;
  renewTime: string;
  up: boolean;
  /** the replica that answered this request */
  self: boolean;
  /** known for the replica that answered; others do not publish theirs */
  version?: string;
}

export interface RequestsStatus {
  inFlight: { readOnly: number; mutating: number };
  longRunning: number;
  /** requests counted by apiserver_request_total since this replica started */
  total: number;
  /** since the previous look at this replica's status (absent on the first look) */
  perSecond?: number;
}

export interface WatchCacheResourceStatus {
  resource: string;
  objects: number;
  watchers: number;
  bookmarksSent: number;
  historyStartRevision: number;
}

export interface WatchCacheStatus {
  enabled: boolean;
  /** the revision this replica's cache has seen up to */
  revision?: number;
  /** etcd's revision minus the cache's, when etcd answered */
  lagRevisions?: number;
  resources: WatchCacheResourceStatus[];
}

export interface EtcdMemberStatus {
  id: string;
  name: string;
  clientURLs: string[];
  isLearner: boolean;
  leader: boolean;
  healthy: boolean;
  revision?: number;
  dbSizeBytes?: number;
  version?: string;
  error?: string;
}

export interface EtcdStatus {
  members: EtcdMemberStatus[];
  leader?: string;
  revision?: number;
  /** etcd has been compacted at least to this revision by kapi's compactor (0: not yet) */
  compactedRevision?: number;
  error?: string;
}

export interface StatusSnapshot {
  kind: 'KapiStatus';
  time: string;
  replica: { leaseName: string; identity: string; version: string; startedAt: string };
  replicas: ReplicaStatus[];
  requests: RequestsStatus;
  watchCache: WatchCacheStatus;
  priorityAndFairness: { enabled: boolean; levels: PriorityLevelStatus[] };
  etcd: EtcdStatus;
}

/** Where the numbers come from; every function is called once per look. */
export interface StatusSources {
  identity: string;
  leaseName: string;
  version: string;
  startedAt: Date;
  identityLeases(): Promise<Lease[]>;
  requests(): Promise<Omit<RequestsStatus, 'perSecond'>>;
  /** undefined with --watch-cache=false */
  watchCache?: { revision(): number; stats(): ResourceCacheStats[]; resourceNameOf(prefix: string): string };
  /** undefined with priority and fairness off */
  priorityLevels?: () => PriorityLevelStatus[];
  etcd: {
    memberList(): Promise<Member[]>;
    endpointStatuses(timeoutMs: number): Promise<EndpointStatus[]>;
    compactedRevision(): Promise<number>;
  };
}

const ETCD_STATUS_TIMEOUT_MS = 2000;

function settled<T>(p: Promise<T>): Promise<{ value?: T; error?: string }> {
  return p.then(
    (value) => ({ value }),
    (err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }),
  );
}

function replicasFrom(leases: Lease[], sources: StatusSources, now: number): ReplicaStatus[] {
  return leases
    .map((l): ReplicaStatus => {
      const name = l.metadata.name ?? '';
      const renewTime = l.spec?.renewTime ?? '';
      const self = name === sources.leaseName;
      const renewed = Date.parse(renewTime);
      return {
        leaseName: name,
        holderIdentity: l.spec?.holderIdentity ?? '',
        hostname: l.metadata.labels?.['kubernetes.io/hostname'] ?? '',
        renewTime,
        up: self || (Number.isFinite(renewed) && now - renewed <= REPLICA_DOWN_AFTER_MS),
        self,
        ...(self ? { version: sources.version } : {}),
      };
    })
    .sort((a, b) => a.leaseName.localeCompare(b.leaseName));
}

/** etcd's members joined with each endpoint's own Status answer (matched by client URL) */
function etcdFrom(members: Member[], statuses: EndpointStatus[]): Pick<EtcdStatus, 'members' | 'leader' | 'revision'> {
  const answered = statuses.filter((s) => s.status);
  const leader = answered[0]?.status?.leader;
  const revision = answered.reduce((max, s) => Math.max(max, s.status!.header.revision), 0) || undefined;
  const out = members.map((m): EtcdMemberStatus => {
    const own = statuses.find((s) => m.clientURLs.some((u) => u.replace(/\/+$/, '') === s.endpoint.replace(/\/+$/, '')));
    return {
      id: m.id,
      name: m.name,
      clientURLs: m.clientURLs,
      isLearner: m.isLearner,
      leader: m.id === leader,
      healthy: own?.status !== undefined && own.status.leader !== '0' && own.status.leader !== '',
      revision: own?.status?.header.revision,
      dbSizeBytes: own?.status?.dbSize,
      version: own?.status?.version,
      error: own ? own.error : "not one of this replica's --etcd-servers",
    };
  });
  return { members: out, leader: out.find((m) => m.leader)?.name ?? leader, revision };
}

export async function collectStatus(sources: StatusSources, now = Date.now()): Promise<StatusSnapshot> {
  const [leases, requests, members, statuses, compacted] = await Promise.all([
    settled(sources.identityLeases()),
    sources.requests(),
    settled(sources.etcd.memberList()),
    sources.etcd.endpointStatuses(ETCD_STATUS_TIMEOUT_MS),
    settled(sources.etcd.compactedRevision()),
  ]);
  const etcd: EtcdStatus = {
    ...etcdFrom(members.value ?? [], statuses),
    compactedRevision: compacted.value,
    ...(members.error ? { error: members.error } : {}),
  };
  const cache = sources.watchCache;
  const cacheRevision = cache?.revision();
  const watchCache: WatchCacheStatus = cache
    ? {
        enabled: true,
        revision: cacheRevision,
        lagRevisions: etcd.revision !== undefined && cacheRevision !== undefined ? Math.max(0, etcd.revision - cacheRevision) : undefined,
        resources: cache
          .stats()
          .map((s) => ({
            resource: cache.resourceNameOf(s.prefix),
            objects: s.objects,
            watchers: s.watchers,
            bookmarksSent: s.bookmarksSent,
            historyStartRevision: s.historyStartRevision,
          }))
          .sort((a, b) => a.resource.localeCompare(b.resource)),
      }
    : { enabled: false, resources: [] };
  return {
    kind: 'KapiStatus',
    time: new Date(now).toISOString(),
    replica: {
      leaseName: sources.leaseName,
      identity: sources.identity,
      version: sources.version,
      startedAt: sources.startedAt.toISOString(),
    },
    replicas: replicasFrom(leases.value ?? [], sources, now),
    requests,
    watchCache,
    priorityAndFairness: { enabled: sources.priorityLevels !== undefined, levels: sources.priorityLevels?.() ?? [] },
    etcd,
  };
}
