// PUT of a whole object: replaces it (or creates it where the resource allows that).

import { writtenJsonOf, type KubeObject } from '../../storage/interface.js';
import { errors } from '../machinery/status.js';
import { clone } from '../registry/object.js';
import { writeObject } from '../request/response.js';
import { bodyFormat, ensureNamespace, readBody } from './decode.js';
import { fieldValidationFor, validateBodyFields } from './field-validation.js';
import { decodeObjectAsKube } from './field-validation-syntax.js';
import { parseWriteOptions } from './options.js';
import { isNamespaceResource, negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

/** kube-apiserver's checkName: the body names the object of the URL */
export function checkName(obj: KubeObject, name: string, namespace: string): void {
  const objName = obj.metadata.name ?? '';
  if (objName !== name) {
    throw errors.badRequest(`the name of the object (${objName}) does not match the name on the URL (${name})`);
  }
  const objNamespace = obj.metadata.namespace ?? '';
  if (namespace !== '' && objNamespace !== '' && objNamespace !== namespace) {
    throw errors.badRequest(`the namespace of the object (${objNamespace}) does not match the namespace on the request (${namespace})`);
  }
}

export async function serveUpdate(scope: Scope): Promise<void> {
  const media = negotiateFor(scope);
  const format = bodyFormat(scope.state);
  const body = await readBody(scope.state, scope.config.maxRequestBodyBytes);
  const opts = parseWriteOptions(scope.state, 'UpdateOptions');
  const tableOptions = tableOptionsFor(scope, media);
  const obj = decodeObjectAsKube(scope, body, format);
  validateBodyFields(fieldValidationFor(scope, opts.fieldValidation), obj, body, format);
  checkName(obj, scope.name, scope.namespace);
  ensureNamespace(obj, isNamespaceResource(scope.resource) ? '' : scope.namespace);
  const ctx = requestContext(scope, {
    dryRun: opts.dryRun,
    fieldManager: opts.fieldManager,
    fieldValidation: opts.fieldValidation,
  });
  // a fresh copy per attempt: the registry may retry after a conflicting write
  ctx.transformReplaces = true;
  const { object, created } = await scope.resource.update(ctx, scope.name, () => clone(obj), {
    allowCreate: false,
  });
  const result = transformResult(scope, media, object, tableOptions);
  // the object as stored, as the store encoded it: no second encoding
  await writeObject(scope.state, created ? 201 : 200, result, media, { json: result === object ? writtenJsonOf(object) : undefined });
}
