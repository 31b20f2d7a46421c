// Asks the authorizer about the request; anything not allowed is 403.

import { forbidden, type AuthorizationAttributes, type Authorizer } from '../../authz/authorizer.js';
import { writeStatusError } from '../../request/response.js';
import type { Filter, RequestState } from '../../request/types.js';
import { anonymousUser } from '../../authn/authenticator.js';

/** Non-resource paths authorized as another path: kapi's own endpoints that should be open to
 *  whoever may read an existing kube one, without a role kube does not have. */
export type AuthorizationAliases = ReadonlyMap<string, string>;

/** `withSelectors` false (the AuthorizeWithSelectors gate off): authorizers never see the
 *  request's label and field selectors */
export function attributesOf(state: RequestState, withSelectors = true, aliases?: AuthorizationAliases): AuthorizationAttributes {
  const info = state.info;
  return {
    user: state.user ?? anonymousUser(),
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: (!info.isResourceRequest && aliases?.get(state.path)) || state.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
    fieldSelector: withSelectors ? info.fieldSelector : undefined,
    labelSelector: withSelectors ? info.labelSelector : undefined,
  };
}

export function withAuthorization(authorizer: Authorizer, withSelectors = true, aliases?: AuthorizationAliases): Filter {
  return (next) => async (state) => {
    const attrs = attributesOf(state, withSelectors, aliases);
    const result = await authorizer.authorize(attrs);
    if (result.decision !== 'allow') {
      // the 403 names the path the client asked for, not its alias
      await writeStatusError(state, forbidden({ ...attrs, path: state.path }, result.reason));
      return;
    }
    await next(state);
  };
}
