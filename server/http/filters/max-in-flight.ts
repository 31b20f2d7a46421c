// Limits the requests this replica serves at once, after authentication and before
// authorization, as kube-apiserver does in one of two ways:
//  - API Priority and Fairness (the default): each request is classified by FlowSchema to a
//    priority level, waits for one of that level's seats (or is turned away with 429), and
//    its response names the FlowSchema and priority level by UID.
//  - --enable-priority-and-fairness=false: the classic filter, separate limits for read-only
//    (get, list, watch) and mutating requests; over the limit a 429, except for
//    system:masters, who are always served. 0 means no limit.
// Long-running requests (watch, proxy, exec, attach, log, portforward) hold no seat while they
// run: the classic filter lets them through; APF classifies a watch and lets it start once it
// gets a seat, which it gives back as the watch begins.

import type { Admission, FlowController } from '../../flowcontrol/controller.js';
import type { Filter, Handler, RequestState } from '../../request/types.js';
import { recordDroppedRequest } from '../../metrics/filter.js';
import { isLongRunning } from './long-running.js';

export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

export type MaxInFlightOptions =
  | { kind: 'priority-and-fairness'; controller: FlowController }
  | { kind: 'max-in-flight'; readOnlyLimit: number; mutatingLimit: number };

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

/** kube's answer: plain text, not a Status object */
function tooManyRequests(state: RequestState, retryAfterSeconds: number): void {
  const res = state.res;
  if (res.headersSent) return;
  res.setHeader('Retry-After', String(retryAfterSeconds));
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.statusCode = 429;
  res.end('Too many requests, please try again later.\n');
  recordDroppedRequest(state);
}

function classicLimits(readOnlyLimit: number, mutatingLimit: number): Filter {
  if (readOnlyLimit <= 0 && mutatingLimit <= 0) return (next) => next;
  let readOnly = 0;
  let mutating = 0;
  return (next) => async (state) => {
    if (isLongRunning(state.info)) return next(state);
    const isMutating = !READ_ONLY_VERBS.has(state.info.verb);
    const limit = isMutating ? mutatingLimit : readOnlyLimit;
    if (limit <= 0) return next(state);
    const inFlight = isMutating ? mutating : readOnly;
    if (inFlight >= limit && !state.user?.groups.includes('system:masters')) {
      tooManyRequests(state, 1);
      return;
    }
    if (isMutating) mutating++;
    else readOnly++;
    try {
      await next(state);
    } finally {
      if (isMutating) mutating--;
      else readOnly--;
    }
  };
}

function priorityAndFairness(controller: FlowController): Filter {
  return (next) => (state) => {
    const user = state.user;
    // exec, attach, log, portforward, proxy: never limited (watches are, until they start)
    if (!user || (isLongRunning(state.info) && state.info.verb !== 'watch')) return next(state);
    const admission = controller.admit({ user, info: state.info }, () => state.signal);
    // an exempt request holds no seat: it goes on in the same promise
    if (!(admission instanceof Promise)) return admitted(state, admission, next);
    return admission.then((a) => admitted(state, a, next));
  };
}

const answered = Promise.resolve();

/** not an async layer of its own: a seat is given back when the rest of the chain settles */
function admitted(state: RequestState, admission: Admission, next: Handler): Promise<void> {
  const { classification } = admission;
  if (!state.res.headersSent) {
    state.res.setHeader(PRIORITY_LEVEL_UID_HEADER, classification.priorityLevelUID);
    state.res.setHeader(FLOW_SCHEMA_UID_HEADER, classification.flowSchemaUID);
  }
  if (!admission.admitted) {
    // a client that went away gets no answer
    if (admission.reason !== 'cancelled') tooManyRequests(state, admission.retryAfterSeconds);
    return answered;
  }
  if (classification.exempt) return next(state);
  if (state.info.verb === 'watch') {
    admission.release();
    return next(state);
  }
  let rest: Promise<void>;
  try {
    rest = next(state);
  } catch (err) {
    admission.release();
    throw err;
  }
  return rest.finally(admission.release);
}

export function withMaxInFlight(opts?: MaxInFlightOptions): Filter {
  if (!opts) return (next) => next;
  if (opts.kind === 'max-in-flight') return classicLimits(opts.readOnlyLimit, opts.mutatingLimit);
  return priorityAndFairness(opts.controller);
}
