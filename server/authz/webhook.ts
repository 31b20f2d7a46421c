// The webhook authorizer: POSTs a SubjectAccessReview (v1 or v1beta1) to the server of a
// kubeconfig file and follows its answer (allowed -> allow, denied -> deny, else no opinion).
// Answers are cached (allowed for authorizedTTL, the rest for unauthorizedTTL). CEL match
// conditions decide whether the webhook is asked at all; a call that fails, times out or
// answers nonsense, and a condition that errors, follow the failure policy.

import { clientFor, readKubeconfigTarget } from '../kubeconfig/read.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from './authorizer.js';
import { compileMatchCondition, type MatchCondition } from './cel.js';

export interface WebhookOptions {
  name: string;
  kubeConfigFile: string;
  subjectAccessReviewVersion: string;
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
  timeoutMs: number;
  /** what a failed call decides: 'NoOpinion' or 'Deny' */
  failurePolicy: string;
  matchConditions?: string[];
  onError?: (err: Error) => void;
}

/** the v1 SubjectAccessReview spec of a request (what match conditions see as `request`) */
export function reviewSpec(attrs: AuthorizationAttributes): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (attrs.isResourceRequest) {
    const ra: Record<string, unknown> = {
      namespace: attrs.namespace,
      verb: attrs.verb,
      group: attrs.apiGroup,
      version: attrs.apiVersion,
      resource: attrs.resource,
      subresource: attrs.subresource,
      name: attrs.name,
    };
    if (attrs.fieldSelector) ra.fieldSelector = { rawSelector: attrs.fieldSelector };
    if (attrs.labelSelector) ra.labelSelector = { rawSelector: attrs.labelSelector };
    spec.resourceAttributes = ra;
  } else {
    spec.nonResourceAttributes = { path: attrs.path, verb: attrs.verb };
  }
  spec.user = attrs.user.username;
  spec.groups = attrs.user.groups;
  if (attrs.user.extra) spec.extra = attrs.user.extra;
  if (attrs.user.uid) spec.uid = attrs.user.uid;
  return spec;
}

interface Cached {
  result: AuthorizationResult;
  expires: number;
}

export function createWebhookAuthorizer(opts: WebhookOptions): Authorizer & { close(): void } {
  const target = readKubeconfigTarget(opts.kubeConfigFile);
  const conditions: MatchCondition[] = (opts.matchConditions ?? []).map(compileMatchCondition);
  const cache = new Map<string, Cached>();
  const { agent, request } = clientFor(target);
  const onFailure = (err: Error): AuthorizationResult => {
    opts.onError?.(err);
    return opts.failurePolicy === 'Deny' ? { decision: 'deny' } : { decision: 'noOpinion' };
  };

  const call = (body: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'Content-Length': String(Buffer.byteLength(body)),
      };
      if (target.token) headers.Authorization = `Bearer ${target.token}`;
      const req = request(target.server, { method: 'POST', agent, headers, timeout: opts.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300)
            return reject(new Error(`webhook answered ${res.statusCode}: ${text.slice(0, 200)}`));
          try {
            const v = JSON.parse(text) as unknown;
            if (!v || typeof v !== 'object') throw new Error('not an object');
            resolve(v as Record<string, unknown>);
          } catch (err) {
            reject(new Error(`malformed SubjectAccessReview response: ${(err as Error).message}`));
          }
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`webhook call timed out after ${opts.timeoutMs}ms`)));
      req.on('error', reject);
      req.end(body);
    });

  return {
    async authorize(attrs) {
      const spec = reviewSpec(attrs);
      if (conditions.length) {
        let errored: Error | undefined;
        for (const c of conditions) {
          try {
            if (!c.evaluate(spec)) return { decision: 'noOpinion' };
          } catch (err) {
            errored ??= err as Error;
          }
        }
        if (errored) return onFailure(errored);
      }
      const key = JSON.stringify(spec);
      const hit = cache.get(key);
      if (hit && hit.expires > Date.now()) return hit.result;
      const version = opts.subjectAccessReviewVersion || 'v1';
      const wireSpec = { ...spec };
      if (version === 'v1beta1') {
        // v1beta1 names the groups list `group`
        wireSpec.group = wireSpec.groups;
        delete wireSpec.groups;
      }
      const body = JSON.stringify({
        apiVersion: `authorization.k8s.io/${version}`,
        kind: 'SubjectAccessReview',
        metadata: { creationTimestamp: null },
        spec: wireSpec,
        status: { allowed: false },
      });
      let answer: Record<string, unknown>;
      try {
        answer = await call(body);
      } catch (err) {
        return onFailure(err as Error);
      }
      const status = (answer.status && typeof answer.status === 'object' ? answer.status : {}) as Record<string, unknown>;
      if (typeof status.allowed !== 'boolean')
        return onFailure(new Error('malformed SubjectAccessReview response: status.allowed missing'));
      const reason = typeof status.reason === 'string' && status.reason ? status.reason : undefined;
      let result: AuthorizationResult;
      if (status.allowed) result = { decision: 'allow', reason };
      else if (status.denied === true) result = { decision: 'deny', reason };
      else result = { decision: 'noOpinion', reason };
      cache.set(key, { result, expires: Date.now() + (status.allowed ? opts.authorizedTTLMs : opts.unauthorizedTTLMs) });
      if (cache.size > 10_000) cache.clear();
      return result;
    },
    close() {
      agent.destroy();
    },
  };
}
