// The authentication.k8s.io group's resources: reviews, answered without storage.

import { groupProvider } from '../descriptor.js';
import { noTokens, SelfSubjectReviewResource, TokenReviewResource } from '../virtual/reviews.js';

export const authenticationProvider = groupProvider('authentication.k8s.io', [
  { key: 'authentication.k8s.io/selfsubjectreviews', serve: ({ info, now }) => new SelfSubjectReviewResource(info, now) },
  {
    key: 'authentication.k8s.io/tokenreviews',
    serve: ({ info, now, options }) => new TokenReviewResource(info, now, options.tokenAuthenticator ?? noTokens),
  },
]);
