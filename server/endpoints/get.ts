// GET of one object (or one subresource of it). An object in the storage version as compact
// JSON is written from its stored text, edited (server/registry/item-text.ts); in protobuf,
// from the bytes it has as a list item (server/registry/protobuf-items.ts).

import { isCompactJson, writeBody, writeObject } from '../request/response.js';
import { negotiateFor, requestContext, type Scope } from './scope.js';
import { tableOptionsFor, transformResult } from './transform.js';

export async function serveGet(scope: Scope): Promise<void> {
  const media = negotiateFor(scope);
  const tableOptions = tableOptionsFor(scope, media);
  const rv = scope.state.query.get('resourceVersion');
  const opts = rv !== null ? { resourceVersion: rv } : {};
  const ctx = requestContext(scope);
  const protobuf = media.format === 'protobuf' && !media.convert;
  if (!scope.resource.openGet || !(protobuf || isCompactJson(scope.state, media))) {
    const obj = await scope.resource.get(ctx, scope.name, opts);
    await writeObject(scope.state, 200, transformResult(scope, media, obj, tableOptions), media);
    return;
  }
  const prepared = await scope.resource.openGet(ctx, scope.name, opts);
  const body = protobuf ? prepared.protobufBody() : prepared.jsonBody();
  if (body !== undefined) {
    await writeBody(scope.state, 200, body, media.contentType);
    return;
  }
  await writeObject(scope.state, 200, transformResult(scope, media, prepared.toObject(), tableOptions), media);
}
