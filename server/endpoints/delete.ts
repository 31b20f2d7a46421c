// DELETE of one object. Finalizers or graceful deletion may keep it for a while.

import type { KubeObject } from '../../storage/interface.js';
import { writeObject } from '../http/response.js';
import { errors, successStatus } from '../http/status.js';
import { bodyFormat, decodeLoose, readBody } from './decode.js';
import { readDeleteOptions, type ParsedDeleteOptions } from './options.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

/** DeleteOptions from the body when one was sent, else from the query */
export async function deleteOptionsOf(scope: Scope): Promise<ParsedDeleteOptions> {
  const body = await readBody(scope.state, scope.config.maxRequestBodyBytes);
  if (body.length === 0) return readDeleteOptions(scope.state.query, undefined);
  const value = decodeLoose(body, bodyFormat(scope.state));
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.badRequest('decoded object cannot be converted to DeleteOptions');
  }
  return readDeleteOptions(scope.state.query, value as Record<string, unknown>);
}

export async function serveDelete(scope: Scope): Promise<void> {
  const media = negotiateFor(scope);
  const opts = await deleteOptionsOf(scope);
  const tableOptions = tableOptionsFor(scope, media);
  const { dryRun, ...deleteOptions } = opts;
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
