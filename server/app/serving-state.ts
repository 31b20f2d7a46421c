// What the handler chain reads and shutdown changes: readiness, the 429s of
// --shutdown-send-retry-after, the requests in flight and the signal that ends every watch.

import { createRequestTracker, type RequestTracker } from '../http/filters/in-flight.js';

export class ServingState {
  /** false until the server listens, and again once shutdown has begun (/readyz fails) */
  ready = false;
  /** set by shutdown with --shutdown-send-retry-after: new requests get 429 */
  rejectingNewRequests = false;
  /** graceful shutdown waits for the requests in flight */
  readonly tracker: RequestTracker = createRequestTracker();
  /** aborted when every open watch must end */
  readonly endWatches = new AbortController();
}
