// audit.k8s.io/v1 Event: the record of one request at one stage, built with kube-apiserver's
// field order (Go's struct order) and its omitempty rules, so log lines and webhook payloads
// read the same as kube-apiserver's.

import { isIP } from 'node:net';
import type { UserInfo } from '../machinery/user.js';
import type { Level, Stage } from './policy.js';

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** metav1.Status as the audit event carries it */
export interface ResponseStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code?: number;
}

/** the mutable state of a request's event, stamped and serialized at every stage */
export interface EventRecord {
  level: Level;
  auditID: string;
  requestURI: string;
  verb: string;
  /** undefined when authentication failed (serialized as `{}`) */
  user?: UserInfo;
  impersonatedUser?: UserInfo;
  sourceIPs: string[];
  userAgent: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  /** microseconds since the epoch */
  requestReceivedMicros: number;
  annotations: Map<string, string>;
}

export type AuditEvent = Record<string, unknown>;

const MAX_USER_AGENT = 1024;

/** kube-apiserver cuts user agents longer than 1024 bytes */
export function truncateUserAgent(ua: string): string {
  return ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua;
}

/** microseconds since the epoch, as precise as the clock allows */
export function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/** metav1.MicroTime: RFC 3339 in UTC with six fractional digits */
export function formatMicroTime(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const iso = new Date(ms).toISOString(); // 2006-01-02T15:04:05.000Z
  const frac = String(((micros % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, '0');
  return `${iso.slice(0, 19)}.${frac}Z`;
}

function normalizeIP(ip: string): string | undefined {
  let s = ip.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (!isIP(s)) return undefined;
  // Go prints an IPv4-mapped IPv6 address as plain IPv4
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  return mapped ? mapped[1] : s.toLowerCase();
}

/** X-Forwarded-For entries, then X-Real-Ip unless already listed, then the peer address
 *  unless it is the last one already (kube-apiserver's utilnet.SourceIPs) */
export function sourceIPs(forwardedFor: string | undefined, realIP: string | undefined, remoteAddress: string | undefined): string[] {
  const out: string[] = [];
  for (const part of (forwardedFor ?? '').split(',')) {
    const ip = normalizeIP(part);
    if (ip) out.push(ip);
  }
  const real = realIP ? normalizeIP(realIP) : undefined;
  if (real && !out.includes(real)) out.push(real);
  const remote = remoteAddress ? normalizeIP(remoteAddress) : undefined;
  if (remote && out[out.length - 1] !== remote) out.push(remote);
  return out;
}

function userJson(u: UserInfo | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!u) return out;
  if (u.username) out.username = u.username;
  if (u.uid) out.uid = u.uid;
  if (u.groups.length > 0) out.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = structuredClone(u.extra);
  return out;
}

function objectRefJson(r: ObjectReference): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['resource', 'namespace', 'name', 'uid', 'apiGroup', 'apiVersion', 'resourceVersion', 'subresource'] as const) {
    if (r[key]) out[key] = r[key];
  }
  return out;
}

function statusJson(s: ResponseStatus): Record<string, unknown> {
  const out: Record<string, unknown> = { metadata: {} };
  if (s.status) out.status = s.status;
  if (s.message) out.message = s.message;
  if (s.reason) out.reason = s.reason;
  if (s.details !== undefined && s.details !== null) out.details = s.details;
  if (s.code) out.code = s.code;
  return out;
}

/** The event as it goes out for `stage`, stamped at `stageMicros`. */
export function eventJson(ev: EventRecord, stage: Stage, stageMicros: number): AuditEvent {
  const out: AuditEvent = {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: ev.level,
    auditID: ev.auditID,
    stage,
    requestURI: ev.requestURI,
    verb: ev.verb,
    user: userJson(ev.user),
  };
  if (ev.impersonatedUser) out.impersonatedUser = userJson(ev.impersonatedUser);
  if (ev.sourceIPs.length > 0) out.sourceIPs = [...ev.sourceIPs];
  if (ev.userAgent) out.userAgent = ev.userAgent;
  if (ev.objectRef) out.objectRef = objectRefJson(ev.objectRef);
  if (ev.responseStatus) out.responseStatus = statusJson(ev.responseStatus);
  if (ev.requestObject !== undefined) out.requestObject = ev.requestObject;
  if (ev.responseObject !== undefined) out.responseObject = ev.responseObject;
  out.requestReceivedTimestamp = formatMicroTime(ev.requestReceivedMicros);
  out.stageTimestamp = formatMicroTime(stageMicros);
  if (ev.annotations.size > 0) {
    // Go writes map keys sorted
    out.annotations = Object.fromEntries([...ev.annotations].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  return out;
}

function dropManagedFields(obj: unknown): void {
  if (typeof obj !== 'object' || obj === null) return;
  const meta = (obj as { metadata?: unknown }).metadata;
  if (typeof meta === 'object' && meta !== null) delete (meta as Record<string, unknown>).managedFields;
}

/** A copy without metadata.managedFields: of the object itself, a list's items, a Table's
 *  row objects (what kube-apiserver strips when a policy says omitManagedFields). */
export function withoutManagedFields(obj: unknown): unknown {
  if (typeof obj !== 'object' || obj === null) return obj;
  const copy = structuredClone(obj) as Record<string, unknown>;
  dropManagedFields(copy);
  if (Array.isArray(copy.items)) for (const item of copy.items) dropManagedFields(item);
  if (copy.kind === 'Table' && Array.isArray(copy.rows)) {
    for (const row of copy.rows as { object?: unknown }[]) dropManagedFields(row?.object);
  }
  return copy;
}
