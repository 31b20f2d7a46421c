// Virtual resources: reviews that answer a question on create and store nothing
// (SelfSubjectReview, SubjectAccessReview and friends, TokenReview). The authorizer, rule
// resolver and token authenticator are injected; without them every access is allowed
// (kube-apiserver with --authorization-mode=AlwaysAllow) and no token authenticates.

import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import { errors } from '../../machinery/status.js';
import { apiVersionOf, asObject, clone, isObject, orderObject, rfc3339 } from '../object.js';
import type { RequestContext } from '../rest.js';
import type { UserInfo } from '../../machinery/user.js';
import type { ReviewAuthorizer } from '../../machinery/access-review.js';
import { CreateOnlyResource } from '../create-only.js';
import { fieldErrors, invalidError, type FieldError } from '../../machinery/validation/field-error.js';

export type { AccessDecision, AccessReviewRequest, ReviewAuthorizer } from '../../machinery/access-review.js';

export interface RulesReview {
  resourceRules: Record<string, unknown>[];
  nonResourceRules: Record<string, unknown>[];
  incomplete: boolean;
  evaluationError?: string;
}

export interface RulesResolver {
  rulesFor(user: UserInfo, namespace: string): Promise<RulesReview>;
}

export interface TokenAuthenticator {
  /** null when the token does not authenticate */
  authenticate(token: string, audiences: string[]): Promise<{ user: UserInfo; audiences: string[] } | null>;
}

export const alwaysAllow: ReviewAuthorizer = { authorize: async () => ({ allowed: true }) };

export const allowEverythingRules: RulesResolver = {
  rulesFor: async () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
};

export const noTokens: TokenAuthenticator = { authenticate: async () => null };

/** a create-only resource (every other verb is 405) that writes its kind into what it returns */
abstract class VirtualResource extends CreateOnlyResource {
  constructor(
    info: ResourceInfo,
    protected readonly now: () => Date,
  ) {
    super(info);
  }

  abstract override create(ctx: RequestContext, obj: KubeObject): Promise<KubeObject>;

  protected typed(obj: KubeObject): KubeObject {
    return orderObject({ ...obj, kind: this.info.kind, apiVersion: apiVersionOf(this.info.group, this.info.version) });
  }
}

function userInfoJson(u: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: u.username };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length) out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) out.extra = u.extra;
  return out;
}

function reviewMeta(obj: KubeObject): KubeObject['metadata'] {
  const meta = isObject(obj.metadata) ? clone(obj.metadata) : {};
  if (meta.creationTimestamp === undefined) meta.creationTimestamp = null;
  return meta;
}

/** metadata of an access review must be empty (a null creationTimestamp is empty) */
function metadataEmpty(obj: KubeObject): boolean {
  const meta = asObject(obj.metadata);
  return Object.entries(meta).every(([k, v]) => v === undefined || (k === 'creationTimestamp' && v === null));
}

export class SelfSubjectReviewResource extends VirtualResource {
  async create(ctx: RequestContext): Promise<KubeObject> {
    return this.typed({
      metadata: { creationTimestamp: rfc3339(this.now()) },
      status: { userInfo: userInfoJson(ctx.user) },
    });
  }
}

type ReviewKind = 'SubjectAccessReview' | 'SelfSubjectAccessReview' | 'LocalSubjectAccessReview';

export class AccessReviewResource extends VirtualResource {
  constructor(
    info: ResourceInfo,
    now: () => Date,
    private readonly authorizer: ReviewAuthorizer,
  ) {
    super(info, now);
  }

  private validate(obj: KubeObject, kind: ReviewKind, namespace: string): void {
    const spec = asObject(obj.spec);
    const errs: FieldError[] = [];
    const hasRes = isObject(spec.resourceAttributes);
    const hasNonRes = isObject(spec.nonResourceAttributes);
    if (hasRes === hasNonRes) {
      errs.push(
        fieldErrors.invalid(
          'spec.resourceAttributes',
          hasNonRes ? (spec.nonResourceAttributes as object) : null,
          'exactly one of nonResourceAttributes or resourceAttributes must be specified',
        ),
      );
    }
    if (kind !== 'SelfSubjectAccessReview') {
      const groups = Array.isArray(spec.groups) ? spec.groups : [];
      if (!spec.user && groups.length === 0)
        errs.push(fieldErrors.invalid('spec.user', String(spec.user ?? ''), 'at least one of user or group must be specified'));
    }
    if (kind === 'LocalSubjectAccessReview') {
      const ns = asObject(spec.resourceAttributes).namespace;
      if (hasRes && ns !== namespace) {
        errs.push(fieldErrors.invalid('spec.resourceAttributes.namespace', String(ns ?? ''), 'must match metadata.namespace'));
      }
    } else if (kind === 'SubjectAccessReview' && !metadataEmpty(obj)) {
      errs.push(fieldErrors.invalid('metadata', asObject(obj.metadata), 'must be empty'));
    }
    if (errs.length) throw invalidError(this.info.group, kind, '', errs);
  }

  async create(ctx: RequestContext, obj: KubeObject): Promise<KubeObject> {
    const kind = this.info.kind as ReviewKind;
    if (kind === 'LocalSubjectAccessReview') {
      const ns = obj.metadata?.namespace;
      if (ns && ns !== ctx.namespace) {
        throw errors.badRequest(`namespace of the request (${ctx.namespace}) does not match the namespace of the object (${ns})`);
      }
    }
    this.validate(obj, kind, ctx.namespace);
    const spec = asObject(obj.spec);
    let user: UserInfo;
    if (kind === 'SelfSubjectAccessReview') {
      user = ctx.user;
    } else {
      user = {
        username: typeof spec.user === 'string' ? spec.user : '',
        uid: typeof spec.uid === 'string' ? spec.uid : undefined,
        groups: Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === 'string') : [],
        extra: isObject(spec.extra) ? (spec.extra as Record<string, string[]>) : undefined,
      };
    }
    const decision = await this.authorizer.authorize({
      user,
      resourceAttributes: isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined,
      nonResourceAttributes: isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined,
    });
    const status: Record<string, unknown> = { allowed: decision.allowed };
    if (decision.denied) status.denied = true;
    if (decision.reason) status.reason = decision.reason;
    if (decision.evaluationError) status.evaluationError = decision.evaluationError;
    return this.typed({ metadata: reviewMeta(obj), spec: clone(spec), status });
  }
}

export class SelfSubjectRulesReviewResource extends VirtualResource {
  constructor(
    info: ResourceInfo,
    now: () => Date,
    private readonly rules: RulesResolver,
  ) {
    super(info, now);
  }

  async create(ctx: RequestContext, obj: KubeObject): Promise<KubeObject> {
    const spec = asObject(obj.spec);
    const namespace = typeof spec.namespace === 'string' ? spec.namespace : '';
    if (!namespace) throw errors.badRequest('no namespace on request');
    const r = await this.rules.rulesFor(ctx.user, namespace);
    const status: Record<string, unknown> = {
      resourceRules: r.resourceRules,
      nonResourceRules: r.nonResourceRules,
      incomplete: r.incomplete,
    };
    if (r.evaluationError) status.evaluationError = r.evaluationError;
    return this.typed({ metadata: reviewMeta(obj), spec: clone(spec), status });
  }
}

export class TokenReviewResource extends VirtualResource {
  constructor(
    info: ResourceInfo,
    now: () => Date,
    private readonly tokens: TokenAuthenticator,
  ) {
    super(info, now);
  }

  async create(_ctx: RequestContext, obj: KubeObject): Promise<KubeObject> {
    const spec = asObject(obj.spec);
    const token = typeof spec.token === 'string' ? spec.token : '';
    if (!token) throw errors.badRequest('token is required for TokenReview in authentication');
    const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
    const res = await this.tokens.authenticate(token, audiences);
    const status: Record<string, unknown> = {};
    if (res) {
      status.authenticated = true;
      status.user = userInfoJson(res.user);
      if (res.audiences.length) status.audiences = res.audiences;
    } else {
      status.user = {};
    }
    return this.typed({ metadata: reviewMeta(obj), spec: clone(spec), status });
  }
}
