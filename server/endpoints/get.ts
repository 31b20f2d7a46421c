// GET of one object (or one subresource of it).

import { writeObject } from '../request/response.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

export async function serveGet(scope: Scope): Promise<void> {
  const media = negotiateFor(scope);
  const tableOptions = tableOptionsFor(scope, media);
  const rv = scope.state.query.get('resourceVersion');
  const obj = await scope.resource.get(requestContext(scope), scope.name, rv !== null ? { resourceVersion: rv } : {});
  await writeObject(scope.state, 200, transformResult(scope, media, obj, tableOptions), media);
}
