// DELETE of one object. Finalizers or graceful deletion may keep it for a while.

import type { KubeObject } from '../../storage/interface.js';
import { writeObject } from '../request/response.js';
import { errors, successStatus } from '../machinery/status.js';
import type { AuthorizationAttributes } from '../authz/authorizer.js';
import { anonymousUser } from '../authn/authenticator.js';
import { bodyFormat, decodeLoose, readBody } from './decode.js';
import { readDeleteOptions, type ParsedDeleteOptions } from './options.js';
import { addAuditAnnotations } from '../request/audit-annotations.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

/** DeleteOptions from the body when one was sent, else from the query */
export async function deleteOptionsOf(scope: Scope): Promise<ParsedDeleteOptions> {
  const allowUnsafe = scope.config.allowUnsafeMalformedObjectDeletion === true;
  const body = await readBody(scope.state, scope.config.maxRequestBodyBytes);
  if (body.length === 0) return readDeleteOptions(scope.state.query, undefined, allowUnsafe);
  const value = decodeLoose(body, bodyFormat(scope.state));
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.badRequest('decoded object cannot be converted to DeleteOptions');
  }
  return readDeleteOptions(scope.state.query, value as Record<string, unknown>, allowUnsafe);
}

/** An unsafe delete also needs the `unsafe-delete-ignore-read-errors` verb on the object
 *  (kube-apiserver's authorizeUnsafeDelete), besides `delete`; never on a subresource. */
async function authorizeUnsafeDelete(scope: Scope): Promise<void> {
  const info = scope.info;
  if (info.subresource) {
    throw errors.forbidden(
      scope.ref,
      'ignoreStoreReadErrorWithClusterBreakingPotential delete option is not allowed on a subresource or non-resource request',
    );
  }
  const authorizer = scope.config.authorizer;
  if (!authorizer) return;
  const attrs: AuthorizationAttributes = {
    user: scope.state.user ?? anonymousUser(),
    verb: 'unsafe-delete-ignore-read-errors',
    isResourceRequest: true,
    path: scope.state.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: '',
    namespace: info.namespace,
    name: scope.name,
  };
  const r = await authorizer.authorize(attrs);
  if (r.decision !== 'allow') {
    throw errors.forbidden(scope.ref, `not permitted to do "unsafe-delete-ignore-read-errors", reason: ${r.reason ?? ''}`);
  }
}

/**
 * kube's corrupt-object deleter: the object's stored value must be unreadable (it does not
 * decode, or its encryption cannot be undone); then its key goes without preconditions,
 * finalizers, admission or graceful deletion. A readable (or missing) object is refused, so
 * the option cannot be used as a stronger delete.
 */
async function deleteCorrupt(scope: Scope): Promise<KubeObject> {
  addAuditAnnotations(scope.state, { 'apiserver.k8s.io/unsafe-delete-ignore-read-error': '' });
  await authorizeUnsafeDelete(scope);
  const resource = scope.resource;
  const outcome = resource.deleteUnreadable
    ? await resource.deleteUnreadable(requestContext(scope, { dryRun: false }), scope.name)
    : 'readable';
  if (outcome !== 'deleted') {
    throw errors.invalid(resource.info.group, resource.info.resource, scope.name, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option',
        field: 'ignoreStoreReadErrorWithClusterBreakingPotential',
      },
    ]);
  }
  return successStatus({ name: scope.name, kind: resource.info.kind }, 200) as unknown as KubeObject;
}

export async function serveDelete(scope: Scope): Promise<void> {
  const media = negotiateFor(scope);
  const opts = await deleteOptionsOf(scope);
  const tableOptions = tableOptionsFor(scope, media);
  if (opts.ignoreStoreReadError) {
    await writeObject(scope.state, 200, transformResult(scope, media, await deleteCorrupt(scope), tableOptions), media);
    return;
  }
  const { dryRun, ignoreStoreReadError: _unsafe, ...deleteOptions } = opts;
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
