// GET of a collection: a (possibly chunked) list at a resource version.

import { writeObject } from '../request/response.js';
import { applyNameToListOptions, listRequestOptions, readListOptions, validateListOptions } from './options.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

export async function serveList(scope: Scope): Promise<void> {
  // kube-apiserver validates the options before it negotiates the response
  const opts = readListOptions(scope.state.query);
  validateListOptions(opts, scope.config.watchListEnabled);
  const media = negotiateFor(scope);
  // a list has no name in its path; one from a metadata.name field selector narrows it
  applyNameToListOptions(opts, scope.name, false);
  const tableOptions = tableOptionsFor(scope, media);
  const list = await scope.resource.list(requestContext(scope), listRequestOptions(opts));
  await writeObject(scope.state, 200, transformResult(scope, media, list, tableOptions), media);
}
