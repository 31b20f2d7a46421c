// Parses what the request is about before anything else looks at it.

import { parseRequestInfo } from '../../request/request-info.js';
import { errors } from '../../machinery/status.js';
import { writeStatusError } from '../../request/response.js';
import type { Filter } from '../../request/types.js';

export function withRequestInfo(): Filter {
  // not an async layer of its own: the request goes on in the same promise
  return (next) => (state) => {
    try {
      state.info = parseRequestInfo(state.method, state.path, state.query);
    } catch {
      // kube-apiserver answers an unparseable resource path with its mux's 404
      return writeStatusError(state, errors.pathNotFound());
    }
    return next(state);
  };
}
