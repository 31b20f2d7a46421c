// Kubernetes' CEL authorizer library: `authorizer.group(g).resource(r).namespace(ns).name(n)
// .subresource(s).check(verb)`, `authorizer.path(p).check(verb)`, `authorizer.serviceAccount(ns,
// name)`, and on the decision `allowed()`, `reason()`, `errored()`, `error()`. With
// AuthorizeWithSelectors (beta, on by default since 1.32), a resource check also takes
// `fieldSelector(s)` and `labelSelector(s)`, passed to the authorizer as raw selectors.
//
// Authorization is asynchronous and cel-js evaluation here is synchronous (it runs under a
// budget, server/cel/budget.ts), so a check whose answer is not known yet throws
// AuthorizationPending after recording the question; `evaluateWithAuthorizer` then asks the
// authorizer everything recorded and evaluates again, until the expression needs nothing new.
// Answers are kept for the whole request, so each question is asked once.

import type { Environment } from '@marcbachmann/cel-js';
import type { UserInfo } from '../machinery/user.js';
import type { AccessDecision, AccessReviewRequest, ReviewAuthorizer } from '../machinery/access-review.js';

export class AuthorizationPending extends Error {
  constructor() {
    super('authorization check pending');
    this.name = 'AuthorizationPending';
  }
}

/** the answers of one request's checks, shared by every expression evaluated for it */
export class AuthorizerSession {
  private readonly answers = new Map<string, AccessDecision>();
  private readonly pending = new Map<string, AccessReviewRequest>();

  constructor(private readonly authorizer: ReviewAuthorizer | undefined) {}

  decide(req: AccessReviewRequest): AccessDecision {
    const key = JSON.stringify(req);
    const known = this.answers.get(key);
    if (known) return known;
    if (!this.authorizer) return { allowed: true };
    this.pending.set(key, req);
    throw new AuthorizationPending();
  }

  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** asks the authorizer every recorded question */
  async resolvePending(): Promise<void> {
    const asks = [...this.pending];
    this.pending.clear();
    await Promise.all(
      asks.map(async ([key, req]) => {
        let d: AccessDecision;
        try {
          d = await this.authorizer!.authorize(req);
        } catch (err) {
          d = { allowed: false, evaluationError: (err as Error).message };
        }
        this.answers.set(key, d);
      }),
    );
  }
}

/** the resource a request is about (for `authorizer.requestResource`) */
export interface RequestResource {
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** `authorizer`: checks as one user */
export class AuthorizerValue {
  /** a check of the request's own resource; null outside a resource request */
  readonly requestResource: ResourceCheckValue | null;

  constructor(
    readonly session: AuthorizerSession,
    readonly user: UserInfo,
    request?: RequestResource,
  ) {
    this.requestResource = request
      ? new ResourceCheckValue(this, request.group, request.resource, request.subresource, request.namespace, request.name)
      : null;
  }
}

export class PathCheckValue {
  constructor(
    readonly authz: AuthorizerValue,
    readonly path: string,
  ) {}
}

export class GroupCheckValue {
  constructor(
    readonly authz: AuthorizerValue,
    readonly group: string,
  ) {}
}

export class ResourceCheckValue {
  constructor(
    readonly authz: AuthorizerValue,
    readonly group: string,
    readonly resource: string,
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
    readonly fieldSelector = '',
    readonly labelSelector = '',
  ) {}

  with(field: 'subresource' | 'namespace' | 'name' | 'fieldSelector' | 'labelSelector', value: string): ResourceCheckValue {
    const n = {
      subresource: this.subresource,
      namespace: this.namespace,
      name: this.name,
      fieldSelector: this.fieldSelector,
      labelSelector: this.labelSelector,
      [field]: value,
    };
    return new ResourceCheckValue(
      this.authz,
      this.group,
      this.resource,
      n.subresource,
      n.namespace,
      n.name,
      n.fieldSelector,
      n.labelSelector,
    );
  }
}

export class DecisionValue {
  constructor(readonly d: AccessDecision) {}
}

function resourceCheck(c: ResourceCheckValue, verb: string): DecisionValue {
  const resourceAttributes: Record<string, unknown> = { verb, group: c.group, version: '*', resource: c.resource };
  if (c.subresource) resourceAttributes['subresource'] = c.subresource;
  if (c.namespace) resourceAttributes['namespace'] = c.namespace;
  if (c.name) resourceAttributes['name'] = c.name;
  if (c.fieldSelector) resourceAttributes['fieldSelector'] = { rawSelector: c.fieldSelector };
  if (c.labelSelector) resourceAttributes['labelSelector'] = { rawSelector: c.labelSelector };
  return new DecisionValue(c.authz.session.decide({ user: c.authz.user, resourceAttributes }));
}

function pathCheck(c: PathCheckValue, verb: string): DecisionValue {
  return new DecisionValue(c.authz.session.decide({ user: c.authz.user, nonResourceAttributes: { path: c.path, verb } }));
}

function serviceAccount(a: AuthorizerValue, namespace: string, name: string): AuthorizerValue {
  return new AuthorizerValue(a.session, {
    username: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  });
}

/** declares the library's types and functions, and the `authorizer` variable when asked */
export function registerAuthorizerLibrary(env: Environment, opts: { declareVariable: boolean }): Environment {
  if (opts.declareVariable) env.registerType('Authorizer', AuthorizerValue).registerVariable('authorizer', 'Authorizer');
  else env.registerType('Authorizer', AuthorizerValue);
  return env
    .registerType('PathCheck', PathCheckValue)
    .registerType('GroupCheck', GroupCheckValue)
    .registerType('ResourceCheck', ResourceCheckValue)
    .registerType('Decision', DecisionValue)
    .registerFunction('Authorizer.path(string): PathCheck', (a: AuthorizerValue, p: string) => new PathCheckValue(a, p))
    .registerFunction('Authorizer.group(string): GroupCheck', (a: AuthorizerValue, g: string) => new GroupCheckValue(a, g))
    .registerFunction('Authorizer.serviceAccount(string, string): Authorizer', serviceAccount)
    .registerFunction(
      'GroupCheck.resource(string): ResourceCheck',
      (g: GroupCheckValue, r: string) => new ResourceCheckValue(g.authz, g.group, r),
    )
    .registerFunction('ResourceCheck.subresource(string): ResourceCheck', (c: ResourceCheckValue, s: string) => c.with('subresource', s))
    .registerFunction('ResourceCheck.namespace(string): ResourceCheck', (c: ResourceCheckValue, s: string) => c.with('namespace', s))
    .registerFunction('ResourceCheck.name(string): ResourceCheck', (c: ResourceCheckValue, s: string) => c.with('name', s))
    .registerFunction('ResourceCheck.fieldSelector(string): ResourceCheck', (c: ResourceCheckValue, s: string) =>
      c.with('fieldSelector', s),
    )
    .registerFunction('ResourceCheck.labelSelector(string): ResourceCheck', (c: ResourceCheckValue, s: string) =>
      c.with('labelSelector', s),
    )
    .registerFunction('ResourceCheck.check(string): Decision', resourceCheck)
    .registerFunction('PathCheck.check(string): Decision', pathCheck)
    .registerFunction('Decision.allowed(): bool', (d: DecisionValue) => d.d.allowed)
    .registerFunction('Decision.reason(): string', (d: DecisionValue) => d.d.reason ?? '')
    .registerFunction('Decision.errored(): bool', (d: DecisionValue) => !!d.d.evaluationError)
    .registerFunction('Decision.error(): string', (d: DecisionValue) => d.d.evaluationError ?? '');
}

/** how many rounds of questions one evaluation may need before it is given up */
const MAX_ROUNDS = 16;

/** Evaluates `run` (synchronous), answering the authorization questions it raises between
 *  attempts. `failed(result)` says whether an attempt failed (then pending questions are
 *  answered and it runs again); a success that left questions unasked did not need them. */
export async function evaluateWithAuthorizer<T>(session: AuthorizerSession, run: () => T, failed: (r: T) => boolean): Promise<T> {
  let result = run();
  for (let round = 0; round < MAX_ROUNDS && failed(result) && session.hasPending; round++) {
    await session.resolvePending();
    result = run();
  }
  return result;
}
