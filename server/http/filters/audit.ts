// Audit. `withAuditInit` (outermost) gives every response, even a 401, its Audit-Id (the
// client's when it sent one); `withAudit` is the slot after authentication where audit
// events will be recorded once there is a policy and a backend.

import { randomUUID } from 'node:crypto';
import { header, type Filter } from '../types.js';

export function withAuditInit(): Filter {
  return (next) => async (state) => {
    const given = header(state.req, 'audit-id');
    state.auditId = given && given.trim() !== '' ? given.trim() : randomUUID();
    if (!state.res.headersSent) state.res.setHeader('Audit-Id', state.auditId);
    await next(state);
  };
}

export function withAudit(): Filter {
  return (next) => next;
}
