// /livez, /readyz and /healthz: each a list of named checks. `?verbose` lists them,
// `?exclude=<name>` skips one, `/<endpoint>/<name>` runs one. Failures are 500 and never say
// why (the endpoints are public); the reason goes to the log.

import { errors } from '../machinery/status.js';
import { writeBody, writeStatusError } from '../request/response.js';
import type { RequestState } from '../request/types.js';

export type { HealthCheck } from '../machinery/health-check.js';
import type { HealthCheck } from '../machinery/health-check.js';

export interface HealthOptions {
  livez?: readonly HealthCheck[];
  readyz?: readonly HealthCheck[];
  healthz?: readonly HealthCheck[];
  /** `--livez-grace-period`: livez checks count as passing this long after start */
  livezGracePeriodSeconds?: number;
  /** when the server started (ms since epoch; default: when the handler was created) */
  startedAt?: number;
  /** logs failing checks with their reasons */
  onFailure?: (endpoint: string, name: string, err: unknown) => void;
}

type Endpoint = 'livez' | 'readyz' | 'healthz';
const ENDPOINTS: readonly Endpoint[] = ['livez', 'readyz', 'healthz'];
const TEXT = 'text/plain; charset=utf-8';

export const pingCheck: HealthCheck = { name: 'ping', check: async () => {} };
export const logCheck: HealthCheck = { name: 'log', check: async () => {} };

/** fails once shutdown has begun, so load balancers stop sending traffic before the server stops */
export function shutdownCheck(isShuttingDown: () => boolean): HealthCheck {
  return {
    name: 'shutdown',
    check: async () => {
      if (isShuttingDown()) throw new Error('process is shutting down');
    },
  };
}

export function namedCheck(name: string, check: () => Promise<void>): HealthCheck {
  return { name, check };
}

/** Returns a handler that answers health paths and returns false for any other path. */
export function createHealthHandler(opts: HealthOptions): (state: RequestState) => Promise<boolean> {
  const startedAt = opts.startedAt ?? Date.now();
  const graceMs = (opts.livezGracePeriodSeconds ?? 0) * 1000;
  const checksFor = (e: Endpoint): readonly HealthCheck[] => {
    const list = opts[e] ?? [];
    return list.length > 0 ? list : [pingCheck];
  };

  const run = async (endpoint: Endpoint, check: HealthCheck): Promise<unknown | undefined> => {
    if (endpoint === 'livez' && Date.now() - startedAt < graceMs) return undefined;
    try {
      await check.check();
      return undefined;
    } catch (err) {
      opts.onFailure?.(endpoint, check.name, err);
      return err ?? new Error('failed');
    }
  };

  return async (state) => {
    const endpoint = ENDPOINTS.find((e) => state.path === `/${e}` || state.path.startsWith(`/${e}/`));
    if (!endpoint) return false;
    // a check's own path is the endpoint's plus its whole name, slashes included
    // (`/readyz/poststarthook/crd-informer-synced`)
    const name = state.path.slice(endpoint.length + 2);
    const headers = { 'X-Content-Type-Options': 'nosniff' };
    const checks = checksFor(endpoint);

    if (name !== '') {
      const check = checks.find((c) => c.name === name);
      if (!check) {
        await writeStatusError(state, errors.pathNotFound());
        return true;
      }
      const err = await run(endpoint, check);
      if (err === undefined) await writeBody(state, 200, 'ok', TEXT, { headers });
      else await writeBody(state, 500, `internal server error: ${reasonOf(err)}\n`, TEXT, { headers });
      return true;
    }

    const excluded = new Set(state.query.getAll('exclude'));
    const unknownExcluded = new Set(excluded);
    const lines: string[] = [];
    let failed = false;
    const results = await Promise.all(checks.map(async (c) => (excluded.has(c.name) ? 'excluded' : await run(endpoint, c))));
    checks.forEach((c, i) => {
      const r = results[i];
      if (r === 'excluded') {
        unknownExcluded.delete(c.name);
        lines.push(`[+]${c.name} excluded: ok`);
      } else if (r === undefined) {
        lines.push(`[+]${c.name} ok`);
      } else {
        failed = true;
        lines.push(`[-]${c.name} failed: reason withheld`);
      }
    });
    if (unknownExcluded.size > 0) {
      const names = [...unknownExcluded]
        .sort()
        .map((n) => JSON.stringify(n))
        .join(',');
      lines.push(`warn: some health checks cannot be excluded: no matches for ${names}`);
    }
    const listing = lines.map((l) => l + '\n').join('');
    if (failed) {
      await writeBody(state, 500, `${listing}${endpoint} check failed\n`, TEXT, { headers });
    } else if (state.query.has('verbose')) {
      await writeBody(state, 200, `${listing}${endpoint} check passed\n`, TEXT, { headers });
    } else {
      await writeBody(state, 200, 'ok', TEXT, { headers });
    }
    return true;
  };
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
