// DELETE of a collection: every object the selectors match.

import { writeObject } from '../request/response.js';
import { deleteOptionsOf } from './delete.js';
import { invalidOptions } from './invalid-options.js';
import { fieldErrors } from '../machinery/validation/field-error.js';
import { listRequestOptions, readListOptions, validateListOptions } from './options.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

export async function serveDeleteCollection(scope: Scope): Promise<void> {
  const media = negotiateFor(scope);
  const listOpts = readListOptions(scope.state.query);
  validateListOptions(listOpts, scope.config.watchListEnabled);
  const opts = await deleteOptionsOf(scope);
  if (opts.ignoreStoreReadError) {
    throw invalidOptions('DeleteOptions', [
      fieldErrors.invalid(
        'ignoreStoreReadErrorWithClusterBreakingPotential',
        true,
        'is not allowed with DELETECOLLECTION, try again after removing the option',
      ),
    ]);
  }
  const tableOptions = tableOptionsFor(scope, media);
  const { dryRun, ignoreStoreReadError: _unsafe, ...deleteOptions } = opts;
  const ctx = requestContext(scope, { dryRun });
  const list = await scope.resource.deleteCollection(ctx, deleteOptions, listRequestOptions(listOpts));
  await writeObject(scope.state, 200, transformResult(scope, media, list, tableOptions), media);
}
