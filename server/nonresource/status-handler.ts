// GET /status: a live page about the cluster and this replica (HTML that polls its JSON twin,
// GET /status?format=json). Authorized like /metrics (see the chain's authorization aliases).

import type { NonResourceHandler } from '../request/non-resource.js';
import { STATUS_PAGE_HTML } from './status-page.js';
import { collectStatus, type StatusSources } from './status-snapshot.js';

/** a look this long after the previous one gives no rate: the window would hide too much */
const RATE_WINDOW_MAX_MS = 60_000;

export function createStatusHandler(sources: StatusSources): NonResourceHandler {
  let previous: { at: number; total: number } | undefined;
  return async (req) => {
    if (req.path !== '/status' && req.path !== '/status/') return undefined;
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    if (req.query.get('format') !== 'json') {
      return {
        status: 200,
        body: STATUS_PAGE_HTML,
        contentType: 'text/html; charset=utf-8',
        headers: { 'Content-Security-Policy': "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:" },
      };
    }
    const now = Date.now();
    const snapshot = await collectStatus(sources, now);
    const total = snapshot.requests.total;
    if (previous && now > previous.at && now - previous.at <= RATE_WINDOW_MAX_MS && total >= previous.total) {
      snapshot.requests.perSecond = ((total - previous.total) * 1000) / (now - previous.at);
    }
    previous = { at: now, total };
    return { status: 200, body: JSON.stringify(snapshot) + '\n', contentType: 'application/json' };
  };
}
