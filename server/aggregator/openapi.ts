// OpenAPI with the aggregated group versions in it: `/openapi/v3` lists each backend's
// `apis/<group>/<version>` document and serves it from the last copy fetched; `/openapi/v2`
// gains each backend's paths for its group version and the definitions the front lacks. The
// copies are refreshed in the background (conditional requests, so an unchanged v2 document
// is not downloaded again); a backend that stops answering keeps its last documents.

import { createHash } from 'node:crypto';
import { encodeSwaggerProto } from '../apis/openapi-proto.js';
import type { NonResourceHandler, RawResponse } from '../request/non-resource.js';
import { jsonTooDeep } from '../limits/decode-limits.js';
import { MAX_BACKEND_OPENAPI_BYTES, MAX_BACKEND_DISCOVERY_BYTES } from '../limits/backend-limits.js';
import type { Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';
import { refreshLoop } from './refresh-loop.js';
import { wantsV2Protobuf } from '../crd/openapi.js';
import type { APIServiceIndex, APIServiceView } from './api-services.js';
import { AGGREGATOR_USER, authProxyHeaders, backendURL, boundedGet, type BackendAgents } from './backend-client.js';
import { resolveServiceEndpoint } from './service-endpoint.js';

const REFRESH_MS = 60_000;
const V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

const hashOf = (b: Buffer): string => createHash('sha512').update(b).digest('hex').toUpperCase();

interface V2Parts {
  etag?: string;
  paths: Record<string, unknown>;
  definitions: Record<string, unknown>;
}

interface BackendDocs {
  v3?: { key: string; body: Buffer; hash: string; backendURL: string };
  v2?: V2Parts;
}

function parseBounded(body: Buffer): unknown {
  if (jsonTooDeep(body)) throw new Error('OpenAPI document nests too deeply');
  return JSON.parse(body.toString('utf8'));
}

export class RemoteOpenAPI {
  private readonly docs = new Map<string, BackendDocs>();
  private gen = 0;

  constructor(
    private readonly index: APIServiceIndex,
    private readonly resolver: ResourceResolver,
    private readonly agents: BackendAgents,
    private readonly log: Logger,
  ) {}

  get generation(): number {
    return this.gen;
  }

  /** `apis/<group>/<version>` -> the backend's v3 document */
  v3Documents(): Map<string, { body: Buffer; hash: string }> {
    const out = new Map<string, { body: Buffer; hash: string }>();
    for (const api of this.index.remotes()) {
      const v3 = this.docs.get(api.name)?.v3;
      if (v3) out.set(v3.key, v3);
    }
    return out;
  }

  v2Parts(): V2Parts[] {
    return this.index
      .remotes()
      .map((api) => this.docs.get(api.name)?.v2)
      .filter((p): p is V2Parts => p !== undefined);
  }

  private async fetchOne(api: APIServiceView, signal: AbortSignal): Promise<boolean> {
    const endpoint = await resolveServiceEndpoint(this.resolver, api.service!);
    if (!endpoint.ok) throw new Error(endpoint.message);
    const target = { api, ...endpoint };
    const agent = this.agents.agentFor(api);
    const identity = authProxyHeaders(AGGREGATOR_USER, ['system:masters'], undefined);
    const previous = this.docs.get(api.name) ?? {};
    const next: BackendDocs = { ...previous };
    let changed = false;
    const key = `apis/${api.group}/${api.version}`;
    const index = await boundedGet(backendURL(target, '/openapi/v3'), {
      agent,
      headers: { ...identity, accept: 'application/json' },
      maxBytes: MAX_BACKEND_DISCOVERY_BYTES,
      signal,
    });
    if (index.status === 200) {
      const paths = ((parseBounded(index.body) as { paths?: Record<string, { serverRelativeURL?: string }> }).paths ?? {}) as Record<
        string,
        { serverRelativeURL?: string }
      >;
      const relative = paths[key]?.serverRelativeURL;
      if (relative && relative.startsWith('/') && previous.v3?.backendURL !== relative) {
        const doc = await boundedGet(backendURL(target, relative), {
          agent,
          headers: { ...identity, accept: 'application/json' },
          maxBytes: MAX_BACKEND_OPENAPI_BYTES,
          signal,
        });
        if (doc.status === 200) {
          parseBounded(doc.body);
          next.v3 = { key, body: doc.body, hash: hashOf(doc.body), backendURL: relative };
          changed = true;
        }
      }
    }
    const v2Headers: Record<string, string | string[]> = { ...identity, accept: 'application/json' };
    if (previous.v2?.etag) v2Headers['if-none-match'] = previous.v2.etag;
    const v2 = await boundedGet(backendURL(target, '/openapi/v2'), {
      agent,
      headers: v2Headers,
      maxBytes: MAX_BACKEND_OPENAPI_BYTES,
      signal,
    });
    if (v2.status === 200) {
      const whole = parseBounded(v2.body) as { paths?: Record<string, unknown>; definitions?: Record<string, unknown> };
      const prefix = `/apis/${api.group}/${api.version}`;
      const paths = Object.fromEntries(
        Object.entries(whole.paths ?? {}).filter(([p]) => p === prefix || p === `${prefix}/` || p.startsWith(`${prefix}/`)),
      );
      const etag = typeof v2.headers.etag === 'string' ? v2.headers.etag : undefined;
      next.v2 = { etag, paths, definitions: whole.definitions ?? {} };
      changed = true;
    }
    this.docs.set(api.name, next);
    return changed;
  }

  async refresh(signal: AbortSignal): Promise<void> {
    const remotes = this.index.remotes();
    const names = new Set(remotes.map((r) => r.name));
    let changed = false;
    for (const name of [...this.docs.keys()]) {
      if (!names.has(name)) {
        this.docs.delete(name);
        changed = true;
      }
    }
    for (const api of remotes) {
      try {
        if (await this.fetchOne(api, signal)) changed = true;
      } catch (err) {
        if (!signal.aborted) this.log.v(1).info('aggregated OpenAPI not fetched', { apiservice: api.name, error: (err as Error).message });
      }
    }
    if (changed) this.gen++;
  }

  async run(signal: AbortSignal): Promise<void> {
    await refreshLoop(this.index, (sig) => this.refresh(sig), REFRESH_MS, signal);
  }
}

const sortedObject = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** the OpenAPI handler with the backends' documents added */
export function withAggregatedOpenAPI(inner: NonResourceHandler, remote: RemoteOpenAPI, generation: () => string): NonResourceHandler {
  let v2Cache: { key: string; json: RawResponse; proto?: RawResponse } | undefined;
  return async (req) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return inner(req);
    const path = req.path.replace(/\/+$/, '');
    if (path === '/openapi/v2') {
      const parts = remote.v2Parts();
      if (parts.length === 0) return inner(req);
      const key = generation();
      if (!v2Cache || v2Cache.key !== key) {
        const headers = { ...req.headers, accept: 'application/json' };
        delete headers['if-none-match'];
        const answer = await inner({ ...req, headers });
        if (!answer || answer.status !== 200) return answer;
        const doc = JSON.parse(answer.body.toString()) as { paths?: Record<string, unknown>; definitions?: Record<string, unknown> };
        const paths = { ...(doc.paths ?? {}) };
        const definitions = { ...(doc.definitions ?? {}) };
        for (const part of parts) {
          Object.assign(paths, part.paths);
          for (const [name, def] of Object.entries(part.definitions)) definitions[name] ??= def;
        }
        const merged = { ...doc, paths: sortedObject(paths), definitions: sortedObject(definitions) };
        const body = Buffer.from(JSON.stringify(merged));
        const etag = JSON.stringify(hashOf(body));
        let proto: RawResponse | undefined;
        try {
          proto = {
            status: 200,
            body: encodeSwaggerProto(merged as Parameters<typeof encodeSwaggerProto>[0]),
            contentType: V2_PROTOBUF,
            etag,
            headers: { Vary: 'Accept' },
          };
        } catch {
          proto = undefined;
        }
        v2Cache = { key, json: { status: 200, body, contentType: 'application/json', etag, headers: { Vary: 'Accept' } }, proto };
      }
      const accept = Array.isArray(req.headers.accept) ? req.headers.accept.join(',') : req.headers.accept;
      if (!wantsV2Protobuf(accept)) return v2Cache.json;
      return v2Cache.proto ?? inner(req);
    }
    if (path === '/openapi/v3') {
      const docs = remote.v3Documents();
      if (docs.size === 0) return inner(req);
      const headers = { ...req.headers };
      delete headers['if-none-match'];
      const answer = await inner({ ...req, headers });
      if (!answer || answer.status !== 200) return answer;
      const index = JSON.parse(answer.body.toString()) as { paths: Record<string, unknown> };
      for (const [k, d] of docs) index.paths[k] = { serverRelativeURL: `/openapi/v3/${k}?hash=${d.hash}` };
      index.paths = sortedObject(index.paths);
      const body = Buffer.from(JSON.stringify(index));
      return { status: 200, body, contentType: 'application/json', etag: JSON.stringify(hashOf(body)) };
    }
    if (path.startsWith('/openapi/v3/')) {
      const key = path.slice('/openapi/v3/'.length);
      const d = remote.v3Documents().get(key);
      if (d) {
        const hash = req.query.get('hash');
        if (hash && hash !== d.hash) {
          return {
            status: 301,
            body: '',
            contentType: 'text/plain; charset=utf-8',
            headers: { Location: `/openapi/v3/${key}?hash=${d.hash}`, Vary: 'Accept' },
          };
        }
        const headers: Record<string, string> = { Vary: 'Accept' };
        if (hash) headers['Cache-Control'] = 'public, immutable';
        return { status: 200, body: d.body, contentType: 'application/json', etag: JSON.stringify(d.hash), headers };
      }
    }
    return inner(req);
  };
}
