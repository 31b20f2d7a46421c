// An access question in SubjectAccessReview terms and its answer: what the SubjectAccessReview
// APIs, CEL's `authorizer` and admission plugins ask the authorizer. Shared by every layer
// that asks; the authorizer (server/authz) answers.

import type { UserInfo } from './user.js';

/** What an access review asks, in SubjectAccessReview spec terms. */
export interface AccessReviewRequest {
  user: UserInfo;
  resourceAttributes?: Record<string, unknown>;
  nonResourceAttributes?: Record<string, unknown>;
}

export interface AccessDecision {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export interface ReviewAuthorizer {
  authorize(req: AccessReviewRequest): Promise<AccessDecision>;
}
