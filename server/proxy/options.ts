// The query options of the connect subresources (PodLogOptions, PodExecOptions,
// PodAttachOptions, PodPortForwardOptions) read as kube's parameter codec reads them, and
// PodLogOptions validated as kube validates them.

import { errors } from '../machinery/status.js';
import { optionalIntParam } from '../request/query.js';
import { fieldErrors, invalidError, type FieldError } from '../machinery/validation/field-error.js';

/** kube's Convert_Slice_string_To_bool: present means true unless it is "0" or "false" */
export function kubeBool(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  if (v === null) return false;
  return !(v === '0' || v.toLowerCase() === 'false');
}

export interface LogOptions {
  container: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  sinceSeconds?: number;
  sinceTime?: Date;
  tailLines?: number;
  limitBytes?: number;
  insecureSkipTLSVerifyBackend: boolean;
}

/** RFC 3339 as Go's metav1.Time parses it from a query */
function parseSinceTime(v: string): Date {
  const m = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(v);
  const t = m ? new Date(v) : new Date(NaN);
  if (Number.isNaN(t.getTime())) {
    throw errors.badRequest(
      `parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(v)} as "2006"`,
    );
  }
  return t;
}

export function readLogOptions(query: URLSearchParams): LogOptions {
  const sinceTime = query.get('sinceTime');
  return {
    container: query.get('container') ?? '',
    follow: kubeBool(query, 'follow'),
    previous: kubeBool(query, 'previous'),
    timestamps: kubeBool(query, 'timestamps'),
    sinceSeconds: optionalIntParam(query, 'sinceSeconds'),
    sinceTime: sinceTime !== null && sinceTime !== '' ? parseSinceTime(sinceTime) : undefined,
    tailLines: optionalIntParam(query, 'tailLines'),
    limitBytes: optionalIntParam(query, 'limitBytes'),
    insecureSkipTLSVerifyBackend: kubeBool(query, 'insecureSkipTLSVerifyBackend'),
  };
}

/** kube's ValidatePodLogOptions; the 422 names PodLogOptions and the pod */
export function validateLogOptions(opts: LogOptions, podName: string): void {
  const errs: FieldError[] = [];
  if (opts.tailLines !== undefined && opts.tailLines < 0)
    errs.push(fieldErrors.invalid('tailLines', opts.tailLines, 'must be greater than or equal to 0'));
  if (opts.limitBytes !== undefined && opts.limitBytes < 1)
    errs.push(fieldErrors.invalid('limitBytes', opts.limitBytes, 'must be greater than 0'));
  if (opts.sinceSeconds !== undefined && opts.sinceTime !== undefined) {
    errs.push(fieldErrors.forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  } else if (opts.sinceSeconds !== undefined && opts.sinceSeconds < 1) {
    errs.push(fieldErrors.invalid('sinceSeconds', opts.sinceSeconds, 'must be greater than 0'));
  }
  if (errs.length > 0) throw invalidError('', 'PodLogOptions', podName, errs);
}

/** Go's time.RFC3339 at second precision, as kube passes sinceTime to the kubelet */
function rfc3339(t: Date): string {
  return t.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** the kubelet's /containerLogs query (kube's LogLocation; url.Values sorts by key) */
export function kubeletLogQuery(opts: LogOptions): URLSearchParams {
  const q = new URLSearchParams();
  if (opts.follow) q.set('follow', 'true');
  if (opts.limitBytes !== undefined) q.set('limitBytes', String(opts.limitBytes));
  if (opts.previous) q.set('previous', 'true');
  if (opts.sinceSeconds !== undefined) q.set('sinceSeconds', String(opts.sinceSeconds));
  if (opts.sinceTime !== undefined) q.set('sinceTime', rfc3339(opts.sinceTime));
  if (opts.tailLines !== undefined) q.set('tailLines', String(opts.tailLines));
  if (opts.timestamps) q.set('timestamps', 'true');
  q.sort();
  return q;
}

export interface StreamRequestOptions {
  container: string;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  command: string[];
}

export function readStreamOptions(query: URLSearchParams): StreamRequestOptions {
  return {
    container: query.get('container') ?? '',
    stdin: kubeBool(query, 'stdin'),
    stdout: kubeBool(query, 'stdout'),
    stderr: kubeBool(query, 'stderr'),
    tty: kubeBool(query, 'tty'),
    command: query.getAll('command'),
  };
}

/** the kubelet's /exec or /attach query (kube's streamParams) */
export function kubeletStreamQuery(opts: StreamRequestOptions, withCommand: boolean): URLSearchParams {
  const q = new URLSearchParams();
  if (withCommand) for (const c of opts.command) q.append('command', c);
  if (opts.stderr) q.set('error', '1');
  if (opts.stdin) q.set('input', '1');
  if (opts.stdout) q.set('output', '1');
  if (opts.tty) q.set('tty', '1');
  return q;
}

/** the ports of a port-forward request, each 1..65535 */
export function readPorts(query: URLSearchParams): number[] {
  const ports: number[] = [];
  for (const raw of query.getAll('ports')) {
    for (const part of raw.split(',')) {
      if (!/^\d+$/.test(part)) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(part)}: invalid syntax`);
      ports.push(Number(part));
    }
  }
  return ports;
}
