// Webhook token authentication (--authentication-token-webhook-*): a bearer token no other
// method recognised is sent as a TokenReview (authentication.k8s.io v1beta1 or v1) to the
// server of a kubeconfig file, with that kubeconfig's CA and credentials.
//
// Behaviour follows kube-apiserver 1.33:
// - spec.audiences are the audiences the caller asked for (for an API request: the API
//   audiences). When the webhook's status names no audiences, the API audiences stand in;
//   an answer whose audiences miss every wanted one is "not authenticated".
// - status.authenticated false is a refusal; with status.error it is an error instead.
// - answers (authenticated or refused) are cached by audiences and token for the TTL;
//   failed calls and status.error answers are not cached, so the next request asks again.
// - a call that fails with a connection reset, a 429, a 5xx other than a bare 503, or any
//   answer carrying Retry-After is retried with exponential backoff (500 ms, x1.5, 20%
//   jitter, 5 attempts), within the request's time budget; other failures (refused
//   connection, TLS error, timeout, 4xx, an undecodable answer) fail at once. The request
//   then fails with 401 and the error is logged.

import { createHash } from 'node:crypto';
import { clientFor, readKubeconfigTarget } from '../kubeconfig/read.js';
import type { UserInfo } from '../machinery/user.js';
import type { TokenAuthenticator, TokenAuthResult } from './token.js';

export const TOKEN_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
const GROUP = 'authentication.k8s.io';

export interface Backoff {
  initialMs: number;
  factor: number;
  /** each wait is lengthened by up to this fraction, at random */
  jitter: number;
  /** attempts at most */
  steps: number;
}

/** kube-apiserver's DefaultAuthWebhookRetryBackoff */
export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 };
/** each call's own limit, as kube's webhook clients (kubeconfigs cannot set one) */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 30_000;
const MAX_CACHE_ENTRIES = 10_000;

export interface WebhookTokenOptions {
  kubeConfigFile: string;
  /** 'v1beta1' or 'v1' */
  version: string;
  /** how long an answer is reused; 0: never cached */
  cacheTTLMs: number;
  /** the API audiences (--api-audiences or the service account issuers) */
  implicitAudiences: readonly string[];
  backoff?: Backoff;
  attemptTimeoutMs?: number;
  /** all attempts and waits of one authentication end within this (the request timeout) */
  budgetMs?: number;
  /** a call failed (the request gets 401) */
  onError?: (err: Error) => void;
}

export interface WebhookTokenAuthenticator {
  authenticate: TokenAuthenticator;
  /** how many TokenReviews were sent (attempts included) */
  calls(): number;
  close(): void;
}

class WebhookCallError extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
  ) {
    super(message);
    this.name = 'WebhookCallError';
  }
}

interface ReviewStatus {
  authenticated: boolean;
  user: UserInfo;
  audiences: string[];
  error: string;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function userOf(v: unknown): UserInfo {
  const u = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
  const user: UserInfo = { username: typeof u.username === 'string' ? u.username : '', groups: strings(u.groups) };
  if (typeof u.uid === 'string' && u.uid) user.uid = u.uid;
  if (u.extra && typeof u.extra === 'object') {
    const extra: Record<string, string[]> = {};
    for (const [k, vals] of Object.entries(u.extra as Record<string, unknown>)) extra[k] = strings(vals);
    user.extra = extra;
  }
  return user;
}

/** the status of a TokenReview answer; throws when the answer is not one of `version` */
export function parseReviewAnswer(text: string, version: string): ReviewStatus {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new WebhookCallError(`decoding the TokenReview answer: ${(err as Error).message}`, false);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new WebhookCallError('decoding the TokenReview answer: not an object', false);
  const o = doc as Record<string, unknown>;
  // a missing apiVersion/kind defaults to what was asked; another type is not decodable
  const apiVersion = typeof o.apiVersion === 'string' && o.apiVersion ? o.apiVersion : `${GROUP}/${version}`;
  const kind = typeof o.kind === 'string' && o.kind ? o.kind : 'TokenReview';
  if (apiVersion !== `${GROUP}/${version}` || kind !== 'TokenReview') {
    throw new WebhookCallError(
      `no kind "${kind}" is registered for version "${apiVersion}": the webhook must answer a ${GROUP}/${version} TokenReview`,
      false,
    );
  }
  const s = (o.status && typeof o.status === 'object' ? o.status : {}) as Record<string, unknown>;
  return {
    authenticated: s.authenticated === true,
    user: userOf(s.user),
    audiences: strings(s.audiences),
    error: typeof s.error === 'string' ? s.error : '',
  };
}

/** whether a non-2xx answer is worth another attempt (kube's DefaultShouldRetry) */
function retriableStatus(code: number, retryAfter: string | undefined, body: string): boolean {
  if (retryAfter && Number.parseInt(retryAfter, 10) > 0) return true;
  let reason = '';
  try {
    const s = JSON.parse(body) as Record<string, unknown>;
    if (s && s.kind === 'Status') {
      reason = typeof s.reason === 'string' ? s.reason : '';
      const details = (s.details ?? {}) as Record<string, unknown>;
      if (typeof details.retryAfterSeconds === 'number' && details.retryAfterSeconds > 0) return true;
      if (reason === 'ServerTimeout' && s.details) return true;
    }
  } catch {
    // not a Status: judged by its code
  }
  if (reason) return reason === 'InternalError' || reason === 'Timeout' || reason === 'TooManyRequests';
  return code === 429 || code === 504 || (code >= 500 && code !== 503);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function createWebhookTokenAuthenticator(opts: WebhookTokenOptions): WebhookTokenAuthenticator {
  if (!(TOKEN_REVIEW_VERSIONS as readonly string[]).includes(opts.version)) {
    throw new Error(`unsupported authentication webhook version "${opts.version}", supported versions are "v1", "v1beta1"`);
  }
  const target = readKubeconfigTarget(opts.kubeConfigFile);
  const { agent, request } = clientFor(target);
  const backoff = opts.backoff ?? DEFAULT_BACKOFF;
  const attemptTimeoutMs = opts.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const budgetMs = opts.budgetMs && opts.budgetMs > 0 ? opts.budgetMs : Infinity;
  const cache = new Map<string, { result: TokenAuthResult | null; expires: number }>();
  const inflight = new Map<string, Promise<TokenAuthResult | null>>();
  let sent = 0;

  const post = (body: string, timeoutMs: number): Promise<string> =>
    new Promise((resolve, reject) => {
      sent++;
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        Accept: 'application/json, */*',
        'Content-Length': String(Buffer.byteLength(body)),
      };
      if (target.token) headers.Authorization = `Bearer ${target.token}`;
      const req = request(target.server, { method: 'POST', agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new WebhookCallError(err.message, false)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) return resolve(text);
          const retryAfter = res.headers['retry-after'];
          reject(new WebhookCallError(`the webhook answered ${code}: ${text.slice(0, 200)}`, retriableStatus(code, retryAfter, text)));
        });
      });
      // the whole exchange, answer included, has this long
      const timer = setTimeout(
        () => req.destroy(new WebhookCallError(`the webhook did not answer within ${timeoutMs}ms`, false)),
        timeoutMs,
      );
      req.on('close', () => clearTimeout(timer));
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err instanceof WebhookCallError) return reject(err);
        // a reset connection is transient; a refused one or a TLS failure is not
        reject(new WebhookCallError(err.message, err.code === 'ECONNRESET'));
      });
      req.end(body);
    });

  /** one review with retries; throws the last call's error */
  const review = async (body: string): Promise<ReviewStatus> => {
    const deadline = Date.now() + budgetMs;
    let wait = backoff.initialMs;
    for (let attempt = 1; ; attempt++) {
      const remaining = deadline - Date.now();
      try {
        return parseReviewAnswer(await post(body, Math.max(1, Math.min(attemptTimeoutMs, remaining))), opts.version);
      } catch (err) {
        const e = err as WebhookCallError;
        if (!e.retriable || attempt >= backoff.steps) throw e;
        const delay = wait * (1 + Math.random() * backoff.jitter);
        if (Date.now() + delay >= deadline) throw e;
        await sleep(delay);
        wait *= backoff.factor;
      }
    }
  };

  const ask = async (token: string, audiences: readonly string[]): Promise<TokenAuthResult | null> => {
    const spec: Record<string, unknown> = { token };
    if (audiences.length > 0) spec.audiences = [...audiences];
    // the shape kube's client sends: an empty metadata and status beside the spec
    const body = JSON.stringify({
      kind: 'TokenReview',
      apiVersion: `${GROUP}/${opts.version}`,
      metadata: { creationTimestamp: null },
      spec,
      status: { user: {} },
    });
    let status: ReviewStatus;
    try {
      status = await review(body);
    } catch (err) {
      const e = new Error(`failed to make webhook authenticator request: ${(err as Error).message}`);
      opts.onError?.(e);
      throw e;
    }
    let matched: string[] = [];
    if (audiences.length > 0) {
      const offered = status.audiences.length > 0 ? status.audiences : opts.implicitAudiences;
      matched = audiences.filter((a) => offered.includes(a));
      if (matched.length === 0) return null;
    }
    if (!status.authenticated) {
      if (status.error) throw new Error(status.error);
      return null;
    }
    return { user: status.user, audiences: matched };
  };

  const keyOf = (token: string, audiences: readonly string[]): string =>
    createHash('sha256')
      .update(JSON.stringify([audiences, token]))
      .digest('base64');

  const authenticate: TokenAuthenticator = async (token, audiences) => {
    const key = keyOf(token, audiences);
    const hit = cache.get(key);
    if (hit) {
      if (hit.expires > Date.now()) return hit.result;
      cache.delete(key);
    }
    // concurrent requests with one token share one review
    let pending = inflight.get(key);
    if (!pending) {
      pending = ask(token, audiences).then(
        (result) => {
          inflight.delete(key);
          if (opts.cacheTTLMs > 0) {
            if (cache.size >= MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
            cache.set(key, { result, expires: Date.now() + opts.cacheTTLMs });
          }
          return result;
        },
        (err: unknown) => {
          inflight.delete(key);
          throw err;
        },
      );
      inflight.set(key, pending);
    }
    return pending;
  };

  return {
    authenticate,
    calls: () => sent,
    close() {
      agent.destroy();
      cache.clear();
    },
  };
}
