// The Available condition of every APIService, as kube-aggregator's two availability
// controllers keep it: local ones are always available (`Local`); a remote one is checked
// step by step — the Service exists, listens on the port, has EndpointSlices with a ready
// address for that port — and then by asking the backend for its discovery document
// (`/apis/<group>/<version>`, as system:kube-aggregator in system:masters, over the
// front-proxy certificate, without verifying the backend: a best-effort probe, as in kube),
// five tries at once, any success passing. Status is written only when it changes, and
// lastTransitionTime only moves when the condition's status does.

import { BACKEND_FETCH_TIMEOUT_MS, MAX_BACKEND_DISCOVERY_BYTES } from '../limits/backend-limits.js';
import { internalContext, isNotFound } from '../controllers/util.js';
import type { Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';
import type { KubeObject } from '../../storage/interface.js';
import { APIREGISTRATION_GROUP, type APIServiceCondition, type APIServiceView } from './api-services.js';
import { AGGREGATOR_USER, authProxyHeaders, backendURL, boundedGet, type BackendAgents } from './backend-client.js';
import { resolveServiceEndpoint } from './service-endpoint.js';

const DISCOVERY_ATTEMPTS = 5;

export type AvailableVerdict = Omit<APIServiceCondition, 'type' | 'lastTransitionTime'>;

const LOCAL: AvailableVerdict = { status: 'True', reason: 'Local', message: 'Local APIServices are always available' };

export interface AvailabilityDeps {
  resolver: ResourceResolver;
  agents: BackendAgents;
}

async function probeOnce(api: APIServiceView, deps: AvailabilityDeps, signal?: AbortSignal): Promise<string | undefined> {
  const endpoint = await resolveServiceEndpoint(deps.resolver, api.service!);
  if (!endpoint.ok) return endpoint.message;
  const path = api.name === 'v1.' ? `/api/${api.version}` : `/apis/${api.group}/${api.version}`;
  const url = backendURL({ api, ...endpoint }, path);
  try {
    const res = await boundedGet(url, {
      agent: deps.agents.agentFor(api, { skipVerify: true }),
      headers: { accept: 'application/json', ...authProxyHeaders(AGGREGATOR_USER, ['system:masters'], undefined) },
      maxBytes: MAX_BACKEND_DISCOVERY_BYTES,
      timeoutMs: BACKEND_FETCH_TIMEOUT_MS,
      signal,
    });
    if (res.status < 200 || res.status >= 300) return `failing or missing response from ${url}: bad status from ${url}: ${res.status}`;
    return undefined;
  } catch (err) {
    return `failing or missing response from ${url}: ${(err as Error).message}`;
  }
}

/** what the Available condition of `api` should say now */
export async function checkAvailability(api: APIServiceView, deps: AvailabilityDeps, signal?: AbortSignal): Promise<AvailableVerdict> {
  if (!api.service) return LOCAL;
  const endpoint = await resolveServiceEndpoint(deps.resolver, api.service);
  if (!endpoint.ok) return { status: endpoint.status, reason: endpoint.reason, message: endpoint.message };
  const results = await Promise.all(Array.from({ length: DISCOVERY_ATTEMPTS }, () => probeOnce(api, deps, signal)));
  if (results.some((r) => r === undefined)) return { status: 'True', reason: 'Passed', message: 'all checks passed' };
  return { status: 'False', reason: 'FailedDiscoveryCheck', message: results[results.length - 1]! };
}

/** true when the stored condition already says this */
export function conditionMatches(api: APIServiceView, verdict: AvailableVerdict): boolean {
  const old = api.conditions.find((c) => c.type === 'Available');
  return old !== undefined && old.status === verdict.status && old.reason === verdict.reason && old.message === verdict.message;
}

function withCondition(obj: KubeObject, verdict: AvailableVerdict, now: () => Date): KubeObject | undefined {
  const status = ((obj as { status?: { conditions?: APIServiceCondition[] } }).status ?? {}) as { conditions?: APIServiceCondition[] };
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const old = conditions.find((c) => c.type === 'Available');
  if (old && old.status === verdict.status && old.reason === verdict.reason && old.message === verdict.message) return undefined;
  const lastTransitionTime =
    old && old.status === verdict.status && old.lastTransitionTime
      ? old.lastTransitionTime
      : now()
          .toISOString()
          .replace(/\.\d+Z$/, 'Z');
  const next: APIServiceCondition = {
    type: 'Available',
    status: verdict.status,
    lastTransitionTime,
    reason: verdict.reason,
    message: verdict.message,
  };
  const others = conditions.filter((c) => c.type !== 'Available');
  return { ...obj, status: { ...status, conditions: [...others, next] } } as KubeObject;
}

/** writes the condition when it differs from the stored one; true when it was written */
export async function recordAvailability(
  resolver: ResourceResolver,
  name: string,
  verdict: AvailableVerdict,
  opts: { log: Logger; now?: () => Date; signal?: AbortSignal },
): Promise<boolean> {
  const rest = resolver.lookup(APIREGISTRATION_GROUP, 'v1', 'apiservices', 'status');
  if (!rest) return false;
  const ctx = internalContext('kube-aggregator', '', opts.signal);
  const now = opts.now ?? (() => new Date());
  let changed = false;
  try {
    await rest.update(
      ctx,
      name,
      (current) => {
        if (!current) throw Object.assign(new Error('gone'), { code: 404 });
        const next = withCondition(current, verdict, now);
        changed = next !== undefined;
        return next ?? current;
      },
      { allowCreate: false },
    );
  } catch (err) {
    if (isNotFound(err) || (err as { code?: number }).code === 404) return false;
    throw err;
  }
  if (changed) {
    opts.log.v(1).info('APIService availability', {
      apiservice: name,
      status: verdict.status,
      reason: verdict.reason ?? '',
      message: verdict.message ?? '',
    });
  }
  return changed;
}
