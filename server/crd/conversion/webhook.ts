// Custom resource conversion through a CRD's conversion webhook (strategy Webhook), as
// kube-apiserver's apiextensions server does it: one ConversionReview per conversion (a list's
// items in one review), the answer checked (uid, Success, count, apiVersion and kind of each
// object, name/namespace/uid unchanged), and of each converted object's metadata only labels
// and annotations kept from the webhook (everything else comes from the original).

import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceResolver } from '../../registry/rest.js';
import { StatusError, type StatusReason } from '../../machinery/status.js';
import { WebhookCallError } from '../../admission/errors.js';
import { postReview, resolveTarget } from '../../admission/webhook/client.js';
import type { ConversionWebhookSpec } from '../../registry/apiextensions/definition.js';
import { validateAnnotations, validateLabels } from '../../registry/validation/object-meta.js';
import { errorString } from '../../machinery/validation/field-error.js';

/** kube's conversion webhook client gives a call at most this long */
export const CONVERSION_TIMEOUT_MS = 30_000;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** the review version kapi speaks with the webhook: the first of the CRD's list it knows */
export function reviewVersionFor(versions: readonly string[] | undefined): 'v1' | 'v1beta1' | undefined {
  for (const v of versions ?? []) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

/** the ConversionReview sent for `objects` */
export function conversionReview(version: 'v1' | 'v1beta1', uid: string, desiredAPIVersion: string, objects: readonly KubeObject[]): Json {
  return {
    kind: 'ConversionReview',
    apiVersion: `apiextensions.k8s.io/${version}`,
    request: { uid, desiredAPIVersion, objects },
  };
}

/** the converted objects of a webhook's answer; throws Error with kube's reason when malformed or failed */
export function convertedObjectsOf(version: 'v1' | 'v1beta1', uid: string, answer: unknown): unknown[] {
  const review = isObject(answer) ? answer : {};
  if (version === 'v1') {
    // v1 answers must say what they are and which request they answer (v1beta1 never had to)
    const gvk = `${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`;
    const want = 'apiextensions.k8s.io/v1, Kind=ConversionReview';
    if (review.apiVersion !== 'apiextensions.k8s.io/v1' || review.kind !== 'ConversionReview') {
      throw new Error(`expected webhook response of ${want}, got ${gvk === ', Kind=' ? '/, Kind=' : gvk}`);
    }
  }
  const response = review.response;
  if (!isObject(response)) throw new Error('no response provided');
  if (version === 'v1' && response.uid !== uid)
    throw new Error(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`);
  const result = isObject(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message) throw new Error(result.message);
    throw new Error(`response.result.status was '${String(result.status ?? '')}', not 'Success'`);
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

const metaOf = (o: Json): Json => (isObject(o.metadata) ? o.metadata : {});

/** why a converted object is refused: its apiVersion/kind, its identity, or its metadata */
export type Refusal = { kind: 'type' | 'identity' | 'metadata'; message: string };

/** checks one converted object against its original and returns it with the original's
 *  metadata (labels and annotations from the webhook), or why it is refused */
export function acceptConverted(original: KubeObject, converted: unknown, desiredAPIVersion: string): KubeObject | Refusal {
  if (!isObject(converted)) return { kind: 'type', message: 'invalid type, expected an object' };
  if (converted.apiVersion !== desiredAPIVersion) {
    return {
      kind: 'type',
      message: `invalid groupVersion (expected ${desiredAPIVersion}, received ${String(converted.apiVersion ?? '')})`,
    };
  }
  if (converted.kind !== original.kind)
    return { kind: 'type', message: `invalid kind (expected ${original.kind ?? ''}, received ${String(converted.kind ?? '')})` };
  const om = original.metadata ?? {};
  const cm = metaOf(converted);
  for (const [field, label] of [
    ['name', 'name'],
    ['namespace', 'namespace'],
    ['uid', 'UID'],
  ] as const) {
    const a = String(om[field] ?? '');
    const b = String(cm[field] ?? '');
    if (a !== b) return { kind: 'identity', message: `must have the same ${label}: ${a} != ${b}` };
  }
  if (!isObject(converted.metadata)) return { kind: 'metadata', message: 'missing metadata in converted object' };
  const meta: Json = structuredClone(om) as Json;
  for (const field of ['labels', 'annotations'] as const) {
    const got = cm[field];
    if (got === undefined || got === null) {
      delete meta[field];
      continue;
    }
    if (!isObject(got)) return { kind: 'metadata', message: `invalid metadata.${field} of type ${typeof got} in converted object` };
    const before = (isObject(meta[field]) ? meta[field] : {}) as Json;
    let changed = Object.keys(before).length !== Object.keys(got).length;
    for (const [k, v] of Object.entries(got)) {
      if (typeof v !== 'string')
        return { kind: 'metadata', message: `metadata.${field}[${k}] must be a string, but is ${typeof v} in converted object` };
      if (before[k] !== v) changed = true;
    }
    if (changed) {
      const values = got as Record<string, string>;
      const errs = field === 'labels' ? validateLabels(values, 'metadata.labels') : validateAnnotations(values, 'metadata.annotation');
      if (errs.length > 0)
        return { kind: 'metadata', message: errs.length > 1 ? `[${errs.map(errorString).join(', ')}]` : errorString(errs[0]!) };
    }
    meta[field] = got;
  }
  return { ...(converted as KubeObject), metadata: meta as KubeObject['metadata'] };
}

const isRefusal = (r: KubeObject | Refusal): r is Refusal => !('metadata' in r);

/** kube's message for a refused object: a list's items are numbered from 1 (kube counts the
 *  item before checking it), a single object's type problems are "at index 0" */
export function refusalMessage(what: string, r: Refusal, list: boolean, n: number): string {
  if (list) {
    if (r.kind === 'metadata') return `conversion webhook for ${what} returned invalid metadata in object at index ${n + 1}: ${r.message}`;
    return `conversion webhook for ${what} returned invalid converted object at index ${n + 1}: ${r.message}`;
  }
  if (r.kind === 'type') return `conversion webhook for ${what} returned invalid object at index 0: ${r.message}`;
  if (r.kind === 'identity') return `conversion webhook for ${what} returned invalid object: ${r.message}`;
  return `conversion webhook for ${what} returned invalid metadata: ${r.message}`;
}

/** kube prints a GroupVersionKind as Go does: `<group>/<version>, Kind=<kind>` */
export function gvkText(apiVersion: string, kind: string): string {
  return `${apiVersion}, Kind=${kind}`;
}

/** the 500 a failed conversion answers with (kube: a plain error, so no reason) */
export function conversionFailed(message: string): StatusError {
  return new StatusError(500, '' as StatusReason, message);
}

export interface WebhookConverterOptions {
  /** the CRD's name: webhook calls are named after it */
  crdName: string;
  webhook: ConversionWebhookSpec;
  resolver: ResourceResolver;
  timeoutMs?: number;
  /** one call (tests replace it); the default posts over HTTPS with the admission client */
  post?: (body: Json, signal?: AbortSignal) => Promise<unknown>;
  newUid?: () => string;
}

export class WebhookConverter {
  private readonly version: 'v1' | 'v1beta1' | undefined;
  private readonly timeoutMs: number;

  constructor(private readonly opts: WebhookConverterOptions) {
    this.version = reviewVersionFor(opts.webhook.conversionReviewVersions);
    this.timeoutMs = Math.min(opts.timeoutMs ?? CONVERSION_TIMEOUT_MS, CONVERSION_TIMEOUT_MS);
  }

  /**
   * Returns `objects` in `desiredAPIVersion`: those already in it as they are, the others
   * converted by one webhook call. Throws a 500 StatusError with kube's message on failure.
   * `list`: the objects are a list's items (kube words its messages for lists differently).
   */
  async convert(objects: readonly KubeObject[], desiredAPIVersion: string, list: boolean, signal?: AbortSignal): Promise<KubeObject[]> {
    const todo = objects.map((o, i) => ({ o, i })).filter(({ o }) => o.apiVersion !== desiredAPIVersion);
    if (todo.length === 0) return [...objects];
    const first = todo[0]!.o;
    const what = gvkText(String(first.apiVersion ?? ''), String(first.kind ?? ''));
    if (!this.version) throw conversionFailed('no supported conversion review versions');
    const uid = (this.opts.newUid ?? randomUUID)();
    const body = conversionReview(
      this.version,
      uid,
      desiredAPIVersion,
      todo.map(({ o }) => o),
    );
    let answer: unknown;
    try {
      answer = await this.post(body, signal);
    } catch (err) {
      const why = err instanceof WebhookCallError ? err.reason.replace(/^failed to call webhook: /, '') : (err as Error).message;
      throw conversionFailed(`conversion webhook for ${what} failed: ${why}`);
    }
    let converted: unknown[];
    try {
      converted = convertedObjectsOf(this.version, uid, answer);
    } catch (err) {
      throw conversionFailed(`conversion webhook for ${what} failed: ${(err as Error).message}`);
    }
    if (converted.length !== todo.length) {
      throw conversionFailed(`conversion webhook for ${what} returned ${converted.length} objects, expected ${todo.length}`);
    }
    const out = [...objects];
    todo.forEach(({ o, i }, n) => {
      const r = acceptConverted(o, converted[n], desiredAPIVersion);
      if (isRefusal(r)) throw conversionFailed(refusalMessage(what, r, list, n));
      out[i] = r;
    });
    return out;
  }

  private async post(body: Json, signal?: AbortSignal): Promise<unknown> {
    if (this.opts.post) return this.opts.post(body, signal);
    const name = `conversion_webhook_for_${this.opts.crdName}`;
    const cfg = this.opts.webhook.clientConfig ?? {};
    const target = await resolveTarget(name, cfg, this.opts.resolver);
    return postReview(name, target, body, this.timeoutMs, signal);
  }
}
