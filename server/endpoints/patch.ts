// PATCH of one object. The patch is applied inside the registry's update, to the current
// object, so a concurrent write makes it apply again to the newer object.

import type { KubeObject } from '../../storage/interface.js';
import { errors } from '../machinery/status.js';
import { writeObject } from '../request/response.js';
import { header } from '../request/types.js';
import { mediaTypeOf } from '../request/negotiation.js';
import { ensureNamespace, readBody } from './decode.js';
import { checkPatchDepth, fieldValidationFor, validatePatchedFields } from './field-validation.js';
import { checkStrategicPatchSyntax, parsePatchAsKube } from './field-validation-syntax.js';
import { parseWriteOptions } from './options.js';
import { isNamespaceResource, negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';
import { checkName } from './update.js';
import type { PatchTarget } from './patch/types.js';
import { APPLY_CBOR_PATCH_TYPE } from './patch/appliers.js';

export async function servePatch(scope: Scope): Promise<void> {
  // the content type first: kube-apiserver refuses an unknown patch type before anything else
  const contentType = mediaTypeOf(header(scope.state.req, 'content-type'));
  const served = (type: string) => type !== APPLY_CBOR_PATCH_TYPE || scope.state.cbor === true;
  const applier = served(contentType) ? scope.config.patchTypes.get(contentType) : undefined;
  if (!applier) {
    throw errors.unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: ${[...scope.config.patchTypes.keys()].filter(served).join(', ')}`,
    );
  }
  const media = negotiateFor(scope);
  const body = await readBody(scope.state, scope.config.maxRequestBodyBytes);
  const opts = parseWriteOptions(scope.state, 'PatchOptions', { isApply: applier.isApply });
  const force = scope.state.query.get('force');
  const tableOptions = tableOptionsFor(scope, media);
  const patch = parsePatchAsKube(applier, contentType, body, opts.fieldValidation);

  const ctx = requestContext(scope, {
    dryRun: opts.dryRun,
    fieldManager: opts.fieldManager,
    fieldValidation: opts.fieldValidation,
  });
  const target: PatchTarget = {
    resource: scope.resource,
    ctx,
    name: scope.name,
    namespace: scope.namespace,
    kind: scope.kind,
    fieldManager: opts.fieldManager,
    force: force !== null && force !== '0' && force.toLowerCase() !== 'false',
  };
  const expectedNamespace = isNamespaceResource(scope.resource) ? '' : scope.namespace;
  const transform = async (current: KubeObject | null): Promise<KubeObject> => {
    if (!current && !applier.createsMissing) throw errors.notFound(scope.ref);
    checkStrategicPatchSyntax(contentType, body);
    checkPatchDepth(contentType, body);
    const patched = validatePatchedFields(
      { ...fieldValidationFor(scope, opts.fieldValidation), patchType: contentType, body },
      await applier.apply(current ? structuredClone(current) : null, patch, target),
    );
    const uid = patched.metadata.uid;
    if (!current && uid) {
      throw errors.conflict(scope.ref, `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`);
    }
    ensureNamespace(patched, expectedNamespace);
    checkName(patched, scope.name, scope.namespace);
    return patched;
  };
  const { object, created } = await scope.resource.update(ctx, scope.name, transform, {
    allowCreate: applier.createsMissing,
  });
  await writeObject(scope.state, created ? 201 : 200, transformResult(scope, media, object, tableOptions), media);
}
