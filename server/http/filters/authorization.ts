// Asks the authorizer about the request; anything not allowed is 403.

import { forbidden, type AuthorizationAttributes, type Authorizer } from '../authz.js';
import { writeStatusError } from '../response.js';
import type { Filter, RequestState } from '../types.js';
import { anonymousUser } from '../authn.js';

export function attributesOf(state: RequestState): AuthorizationAttributes {
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
    fieldSelector: info.fieldSelector,
    labelSelector: info.labelSelector,
  };
}

export function withAuthorization(authorizer: Authorizer): Filter {
  return (next) => async (state) => {
    const attrs = attributesOf(state);
    const result = await authorizer.authorize(attrs);
    if (result.decision !== 'allow') {
      await writeStatusError(state, forbidden(attrs, result.reason));
      return;
    }
    await next(state);
  };
}
