// Audit annotations from anywhere a request goes (admission, endpoints, filters) reach its audit
// event through this sink, so that those layers need not know the audit filter above them.

import type { RequestState } from './types.js';

type Sink = (annotations: Record<string, string>) => void;

const sinks = new WeakMap<RequestState, Sink>();

/** the audit filter: where this request's annotations go (unset: the request is not audited) */
export function setAuditAnnotationSink(state: RequestState, sink: Sink): void {
  sinks.set(state, sink);
}

/** adds annotations to the request's audit event; a key already set keeps its first value */
export function addAuditAnnotations(state: RequestState, annotations: Record<string, string>): void {
  sinks.get(state)?.(annotations);
}
