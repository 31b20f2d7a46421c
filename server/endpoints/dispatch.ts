// Routes a resource request to its verb handler, answering what kube-apiserver's router
// answers for paths and methods it has no route for (404 and 405 Status).

import type { Verb } from '../apis/types.js';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { StorageError } from '../../storage/errors.js';
import { errors, StatusError } from '../machinery/status.js';
import { writeError, writeStatusError } from '../request/response.js';
import type { RequestState } from '../request/types.js';
import { serveCreate } from './create.js';
import { serveDelete } from './delete.js';
import { serveDeleteCollection } from './deletecollection.js';
import { serveGet } from './get.js';
import { serveList } from './list.js';
import { servePatch } from './patch.js';
import { newScope, type EndpointConfig, type Scope } from './scope.js';
import { serveUpdate } from './update.js';
import { serveWatch } from './watch.js';

const ITEM_VERBS: readonly Verb[] = ['get', 'update', 'patch', 'delete'];
const COLLECTION_VERBS: readonly Verb[] = ['list', 'watch', 'create', 'deletecollection'];

function verbsOf(resource: RESTResource): readonly Verb[] {
  if (!resource.subresource) return resource.info.verbs;
  return resource.info.subresources.find((s) => s.name === resource.subresource)?.verbs ?? [];
}

type Route = { handler: (scope: Scope) => Promise<void>; verb: Verb } | { error: StatusError };

/** Which handler serves this request, or the 404/405 for routes that do not exist. */
export function route(state: RequestState, resource: RESTResource): Route {
  const info = state.info;
  const verbs = verbsOf(resource);
  const isItem = info.name !== '' && info.parts.length >= 2;
  const isSubresource = resource.subresource !== undefined;

  // namespaced resources live under namespaces/<ns>/ except for the all-namespaces list and
  // watch; cluster-scoped ones never do
  if (resource.info.namespaced) {
    if (!info.namespaceInPath) {
      if (isItem) return { error: errors.pathNotFound() };
      if (info.verb !== 'list' && info.verb !== 'watch') return { error: errors.methodNotRegistered() };
    }
  } else if (info.namespaceInPath) {
    return { error: errors.pathNotFound() };
  }

  // subresources are always addressed through an object
  if (isSubresource && info.parts.length < 3) return { error: errors.pathNotFound() };
  if (info.parts.length > 3) return { error: errors.pathNotFound() };

  const pathVerbs = isItem ? (isSubresource ? [...ITEM_VERBS, 'create' as Verb] : ITEM_VERBS) : COLLECTION_VERBS;
  if (!verbs.some((v) => pathVerbs.includes(v))) return { error: errors.pathNotFound() };

  const allowed = (verb: Verb) => (verbs.includes(verb) ? undefined : errors.methodNotRegistered());
  const pick = (verb: Verb, handler: (scope: Scope) => Promise<void>): Route => {
    const err = allowed(verb);
    return err ? { error: err } : { handler, verb };
  };

  if (info.verbViaPathPrefix) {
    if (info.verb !== 'watch' || (state.method !== 'GET' && state.method !== 'HEAD')) {
      return { error: info.verb === 'watch' ? errors.methodNotRegistered() : errors.pathNotFound() };
    }
    return pick('watch', serveWatch);
  }

  switch (info.verb) {
    case 'get':
      return pick('get', serveGet);
    case 'list':
      return pick('list', serveList);
    case 'watch':
      return pick('watch', serveWatch);
    case 'create':
      if (isItem && !isSubresource) return { error: errors.methodNotRegistered() };
      return pick('create', serveCreate);
    case 'update':
      return isItem ? pick('update', serveUpdate) : { error: errors.methodNotRegistered() };
    case 'patch':
      return isItem ? pick('patch', servePatch) : { error: errors.methodNotRegistered() };
    case 'delete':
      return pick('delete', serveDelete);
    case 'deletecollection':
      return pick('deletecollection', serveDeleteCollection);
    default:
      return { error: errors.methodNotRegistered() };
  }
}

/** The handler of every resource request (after authentication and authorization). */
export function createResourceHandler(resolver: ResourceResolver, config: EndpointConfig) {
  return async (state: RequestState): Promise<void> => {
    const info = state.info;
    const resource = resolver.lookup(info.apiGroup, info.apiVersion, info.resource, info.subresource || undefined);
    if (!resource) {
      await writeStatusError(state, errors.pathNotFound());
      return;
    }
    const r = route(state, resource);
    if ('error' in r) {
      await writeStatusError(state, r.error);
      return;
    }
    const scope = newScope(state, resource, config);
    try {
      await r.handler(scope);
    } catch (err) {
      // anything but a Status or storage error is a bug: panic recovery reports it
      const expected = err instanceof StatusError || err instanceof StorageError;
      if (!expected || state.res.headersSent) throw err;
      await writeError(state, err, scope.ref);
    }
  };
}
