// Asks the authorizer about the request; anything not allowed is 403.

import { forbidden, type AuthorizationAttributes, type Authorizer } from '../authz.js';
import { writeStatusError } from '../response.js';
import type { Filter, RequestState } from '../types.js';
import { anonymousUser } from '../authn.js';

/** `withSelectors` false (the AuthorizeWithSelectors gate off): authorizers never see the
 *  request's label and field selectors */
export function attributesOf(state: RequestState, withSelectors = true): AuthorizationAttributes {
  const info = state.info;
  return {
    user: state.user ?? anonymousUser(),
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: state.path,
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

export function withAuthorization(authorizer: Authorizer, withSelectors = true): Filter {
  return (next) => async (state) => {
    const attrs = attributesOf(state, withSelectors);
    const result = await authorizer.authorize(attrs);
    if (result.decision !== 'allow') {
      await writeStatusError(state, forbidden(attrs, result.reason));
      return;
    }
    await next(state);
  };
}
