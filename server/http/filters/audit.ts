// The audit slot: every response carries its Audit-Id (the client's when it sent one).
// Audit policy and backends come later.

import { randomUUID } from 'node:crypto';
import { header, type Filter } from '../types.js';

export function withAudit(): Filter {
  return (next) => async (state) => {
    const given = header(state.req, 'audit-id');
    state.auditId = given && given.trim() !== '' ? given.trim() : randomUUID();
    if (!state.res.headersSent) state.res.setHeader('Audit-Id', state.auditId);
    await next(state);
  };
}
