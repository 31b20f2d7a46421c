// The authorization.k8s.io group's resources: reviews, answered without storage.

import { groupProvider, type DescriptorContext } from '../descriptor.js';
import { AccessReviewResource, allowEverythingRules, alwaysAllow, SelfSubjectRulesReviewResource } from '../virtual/reviews.js';

const accessReviews = ({ info, now, options }: DescriptorContext) => new AccessReviewResource(info, now, options.authorizer ?? alwaysAllow);

export const authorizationProvider = groupProvider('authorization.k8s.io', [
  { key: 'authorization.k8s.io/localsubjectaccessreviews', serve: accessReviews },
  { key: 'authorization.k8s.io/selfsubjectaccessreviews', serve: accessReviews },
  {
    key: 'authorization.k8s.io/selfsubjectrulesreviews',
    serve: ({ info, now, options }) => new SelfSubjectRulesReviewResource(info, now, options.rulesResolver ?? allowEverythingRules),
  },
  { key: 'authorization.k8s.io/subjectaccessreviews', serve: accessReviews },
]);
