// POST of a new object to a collection (or to a named subresource: binding, eviction, token).

import { writtenJsonOf } from '../../storage/interface.js';
import { writeObject } from '../request/response.js';
import { bodyFormat, ensureNamespace, readBody, wipeSystemFields } from './decode.js';
import { fieldValidationFor, validateBodyFields } from './field-validation.js';
import { decodeObjectAsKube } from './field-validation-syntax.js';
import { parseWriteOptions } from './options.js';
import { isNamespaceResource, negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

export async function serveCreate(scope: Scope): Promise<void> {
  const media = negotiateFor(scope);
  const format = bodyFormat(scope.state);
  const body = await readBody(scope.state, scope.config.maxRequestBodyBytes);
  const opts = parseWriteOptions(scope.state, 'CreateOptions');
  const tableOptions = tableOptionsFor(scope, media);
  const obj = decodeObjectAsKube(scope, body, format);
  validateBodyFields(fieldValidationFor(scope, opts.fieldValidation), obj, body, format);
  const subresource = scope.resource.subresource;
  if (!subresource) wipeSystemFields(obj);
  // the namespace object lives outside namespaces; every other object in the request's
  ensureNamespace(obj, isNamespaceResource(scope.resource) ? '' : scope.namespace);
  const ctx = requestContext(scope, {
    dryRun: opts.dryRun,
    fieldManager: opts.fieldManager,
    fieldValidation: opts.fieldValidation,
  });
  ctx.bodyHandedOver = true;
  const created = await scope.resource.create(ctx, obj);
  const status = created as { kind?: unknown; code?: unknown };
  if (status.kind === 'Status' && !status.code) status.code = 201;
  const result = transformResult(scope, media, created, tableOptions);
  // the object as stored, as the store encoded it: no second encoding
  await writeObject(scope.state, 201, result, media, { json: result === created ? writtenJsonOf(created) : undefined });
}
