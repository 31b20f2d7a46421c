// `serviceaccounts/<name>/token`: the TokenRequest API (`kubectl create token`). Creating a
// TokenRequest signs a bound service account token for the account, optionally bound to a
// Pod, Secret or Node of the request (the token dies with that object), and answers the
// TokenRequest with `status.token` and `status.expirationTimestamp`. Nothing is stored.

import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import { errors } from '../../machinery/status.js';
import { asObject, isObject, rfc3339 } from '../object.js';
import type { RequestContext } from '../rest.js';
import { CreateOnlyResource } from '../create-only.js';
import { fieldErrors, invalidError, type FieldError } from '../../machinery/validation/field-error.js';
import { addWarning } from '../../machinery/warnings.js';

export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;
/** the expiration kube's admission gives projected tokens, which may be extended (1h + 7s) */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 3607;
/** how far such a token is extended: a year */
export const EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

/** a bound service account token to sign */
export interface BoundTokenRequest {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  audiences: string[];
  expirationSeconds: number;
  /** bound objects (a pod also names its node) */
  pod?: { name: string; uid: string };
  secret?: { name: string; uid: string };
  node?: { name: string; uid: string };
  /** seconds after issue at which an extended token counts as stale */
  warnAfterSeconds?: number;
  now?: Date;
}

/** signs bound tokens (kube's TokenGenerator; authentication provides it) */
export interface BoundTokenSigner {
  issue(req: BoundTokenRequest): Promise<{ token: string }>;
}

export interface ServiceAccountTokenOptions {
  /** signs tokens; undefined when this server has no signing key (then 404, as kube-apiserver does not serve the subresource) */
  issuer?: BoundTokenSigner;
  /** audiences a request without `spec.audiences` gets (the API audiences) */
  apiAudiences: () => readonly string[];
  /** --service-account-max-token-expiration in seconds (0: no cap) */
  maxExpirationSeconds: number;
  /** --service-account-extend-token-expiration */
  extendExpiration: boolean;
  now?: () => Date;
}

/** reads an object of the request's namespace (or a Node), throwing the registry's 404 */
export type BoundObjectGetter = (
  ctx: RequestContext,
  resource: 'serviceaccounts' | 'pods' | 'secrets' | 'nodes',
  name: string,
) => Promise<KubeObject>;

function validateSpec(spec: Record<string, unknown>, name: string): void {
  const errs: FieldError[] = [];
  const exp = spec.expirationSeconds as number;
  if (exp < MIN_EXPIRATION_SECONDS)
    errs.push(fieldErrors.invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 10 minutes'));
  if (exp > MAX_EXPIRATION_SECONDS)
    errs.push(fieldErrors.invalid('spec.expirationSeconds', exp, 'may not specify a duration larger than 2^32 seconds'));
  if (errs.length) throw invalidError('authentication.k8s.io', 'TokenRequest', name, errs);
}

export class ServiceAccountTokenResource extends CreateOnlyResource {
  constructor(
    info: ResourceInfo,
    private readonly fetch: BoundObjectGetter,
    private readonly opts: ServiceAccountTokenOptions,
  ) {
    super(info, 'token');
  }

  async create(ctx: RequestContext, req: KubeObject): Promise<KubeObject> {
    const issuer = this.opts.issuer;
    if (!issuer) throw errors.pathNotFound();
    const name = ctx.name ?? '';
    const meta = asObject(req.metadata);
    if (meta.name && meta.name !== name) {
      throw invalidError('authentication.k8s.io', 'TokenRequest', name, [
        fieldErrors.invalid('metadata.name', meta.name as string, 'must match the service account name if specified'),
      ]);
    }
    if (meta.namespace && meta.namespace !== ctx.namespace) {
      throw invalidError('authentication.k8s.io', 'TokenRequest', name, [
        fieldErrors.invalid('metadata.namespace', meta.namespace as string, 'must match the service account namespace if specified'),
      ]);
    }
    const spec = { ...asObject(req.spec) };
    if (typeof spec.expirationSeconds !== 'number') spec.expirationSeconds = DEFAULT_TOKEN_EXPIRATION_SECONDS;
    if (!Array.isArray(spec.audiences)) spec.audiences = [];
    validateSpec(spec, name);

    const account = await this.fetch(ctx, 'serviceaccounts', name);
    const bound: { pod?: KubeObject; secret?: KubeObject; node?: KubeObject } = {};
    const ref = isObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
    if (ref) {
      const kind = String(ref.kind ?? '');
      const apiVersion = String(ref.apiVersion ?? '');
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
      const refName = String(ref.name ?? '');
      let target: KubeObject;
      if (group === '' && kind === 'Pod') {
        target = bound.pod = await this.fetch(ctx, 'pods', refName);
        const podAccount = String(asObject(target.spec).serviceAccountName ?? '');
        if (podAccount !== name) {
          throw errors.badRequest(
            `cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with serviceaccount ${JSON.stringify(podAccount)}`,
          );
        }
        const nodeName = String(asObject(target.spec).nodeName ?? '');
        if (nodeName) bound.node = await this.fetch(ctx, 'nodes', nodeName).catch(() => undefined);
      } else if (group === '' && kind === 'Secret') {
        target = bound.secret = await this.fetch(ctx, 'secrets', refName);
      } else if (group === '' && kind === 'Node') {
        target = bound.node = await this.fetch(ctx, 'nodes', refName);
      } else {
        const gvk = `${group ? group + '/' : ''}${apiVersion.includes('/') ? apiVersion.split('/')[1] : apiVersion}, Kind=${kind}`;
        throw errors.badRequest(`cannot bind token to object of type ${gvk}`);
      }
      const uid = target.metadata.uid ?? '';
      if (ref.uid && ref.uid !== uid) {
        throw errors.conflict(
          { group, resource: kind, name: refName },
          `the UID in the bound object reference (${String(ref.uid)}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
        );
      }
    }

    let audiences = (spec.audiences as unknown[]).filter((a): a is string => typeof a === 'string');
    if (audiences.length === 0) audiences = [...this.opts.apiAudiences()];
    spec.audiences = audiences;
    const max = this.opts.maxExpirationSeconds;
    if (max > 0 && (spec.expirationSeconds as number) > max) {
      addWarning(ctx.warnings, `requested expiration of ${spec.expirationSeconds as number} seconds shortened to ${max} seconds`);
      spec.expirationSeconds = max;
    }
    let expirationSeconds = spec.expirationSeconds as number;
    let warnAfterSeconds: number | undefined;
    const kubeAudiences = audiences.every((a) => this.opts.apiAudiences().includes(a));
    if (this.opts.extendExpiration && bound.pod && expirationSeconds === WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS && kubeAudiences) {
      warnAfterSeconds = expirationSeconds;
      expirationSeconds = EXPIRATION_EXTENSION_SECONDS;
    }

    const now = this.opts.now?.() ?? new Date();
    const metadata: Record<string, unknown> = {
      ...meta,
      name,
      namespace: ctx.namespace,
      creationTimestamp: rfc3339(now),
    };
    const out: KubeObject = {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: metadata as KubeObject['metadata'],
      spec: { audiences, expirationSeconds: spec.expirationSeconds, boundObjectRef: ref ?? null },
      status: { token: '', expirationTimestamp: null },
    };
    if (ctx.dryRun) return out;

    const ref2 = (o?: KubeObject) => (o ? { name: o.metadata.name ?? '', uid: o.metadata.uid ?? '' } : undefined);
    const { token } = await issuer.issue({
      namespace: ctx.namespace,
      serviceAccount: { name: account.metadata.name ?? name, uid: account.metadata.uid ?? '' },
      audiences,
      expirationSeconds,
      pod: ref2(bound.pod),
      secret: ref2(bound.secret),
      node: ref2(bound.node),
      warnAfterSeconds,
      now,
    });
    // the status expiry is the requested one, never later than the token's own `exp`
    out.status = { token, expirationTimestamp: rfc3339(new Date(now.getTime() + (spec.expirationSeconds as number) * 1000)) };
    return out;
  }
}
