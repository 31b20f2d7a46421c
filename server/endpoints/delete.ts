// DELETE of one object. Finalizers or graceful deletion may keep it for a while.

import type { KubeObject } from '../../storage/interface.js';
import { writeObject } from '../request/response.js';
import { errors, successStatus } from '../machinery/status.js';
import type { AuthorizationAttributes } from '../authz/authorizer.js';
import { anonymousUser } from '../authn/authenticator.js';
import { bodyFormat, decodeLoose, readBody } from './decode.js';
import { readDeleteOptions, type ParsedDeleteOptions } from './options.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

/** DeleteOptions from the body when one was sent, else from the query; `unsafeIgnoreReadErrors`
 *  is ignoreStoreReadErrorWithClusterBreakingPotential */
export async function deleteOptionsOf(scope: Scope): Promise<ParsedDeleteOptions & { unsafeIgnoreReadErrors?: boolean }> {
  const body = await readBody(scope.state, scope.config.maxRequestBodyBytes);
  if (body.length === 0) {
    const unsafe = scope.state.query.get('ignoreStoreReadErrorWithClusterBreakingPotential') === 'true';
    return { ...readDeleteOptions(scope.state.query, undefined), ...(unsafe ? { unsafeIgnoreReadErrors: true } : {}) };
  }
  const value = decodeLoose(body, bodyFormat(scope.state));
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.badRequest('decoded object cannot be converted to DeleteOptions');
  }
  const unsafe = (value as Record<string, unknown>).ignoreStoreReadErrorWithClusterBreakingPotential === true;
  return { ...readDeleteOptions(scope.state.query, value as Record<string, unknown>), ...(unsafe ? { unsafeIgnoreReadErrors: true } : {}) };
}

/** An unsafe force delete also needs the `unsafe-delete-ignore-read-errors` verb on the
 *  object (kube-apiserver's authorizeUnsafeDelete), besides `delete`. */
async function authorizeUnsafeDelete(scope: Scope): Promise<void> {
  const authorizer = scope.config.authorizer;
  if (!authorizer) return;
  const info = scope.info;
  const attrs: AuthorizationAttributes = {
    user: scope.state.user ?? anonymousUser(),
    verb: 'unsafe-delete-ignore-read-errors',
    isResourceRequest: true,
    path: scope.state.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: scope.name,
  };
  const r = await authorizer.authorize(attrs);
  if (r.decision !== 'allow') {
    throw errors.forbidden(scope.ref, `not permitted to do "unsafe-delete-ignore-read-errors", reason: ${r.reason ?? ''}`);
  }
}

export async function serveDelete(scope: Scope): Promise<void> {
  const media = negotiateFor(scope);
  const opts = await deleteOptionsOf(scope);
  if (opts.unsafeIgnoreReadErrors) await authorizeUnsafeDelete(scope);
  const tableOptions = tableOptionsFor(scope, media);
  const { dryRun, unsafeIgnoreReadErrors: _unsafe, ...deleteOptions } = opts;
  const ctx = requestContext(scope, { dryRun });
  const { object, deleted } = await scope.resource.delete(ctx, scope.name, deleteOptions);
  // kube-apiserver answers 202 only when a cascading delete (orphanDependents=false) is still
  // in progress; graceful deletion and finalizers answer 200 with the object
  const code = !deleted && opts.orphanDependents === false ? 202 : 200;
  const result =
    (object as unknown) === undefined || object === null
      ? (successStatus({ name: scope.name, kind: scope.resource.info.kind }, code) as unknown as KubeObject)
      : object;
  await writeObject(scope.state, code, transformResult(scope, media, result, tableOptions), media);
}
