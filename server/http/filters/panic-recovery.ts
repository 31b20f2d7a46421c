// Anything a handler throws becomes a 500 Status (or, once the response has started, a reset
// of that one stream); the process keeps serving.

import { errors, StatusError } from '../../machinery/status.js';
import { writeStatusError } from '../../request/response.js';
import type { Filter, RequestState } from '../../request/types.js';

export type PanicReporter = (err: unknown, state: RequestState) => void;

export function withPanicRecovery(report: PanicReporter = () => {}): Filter {
  return (next) => async (state) => {
    try {
      await next(state);
    } catch (err) {
      if (err instanceof StatusError) {
        // a filter that threw a Status instead of writing it: still the client's answer
        await respondOrReset(state, err);
        return;
      }
      report(err, state);
      await respondOrReset(state, errors.internal(err instanceof Error ? err.message : String(err)));
    }
  };
}

async function respondOrReset(state: RequestState, status: StatusError): Promise<void> {
  const res = state.res;
  if (!res.headersSent) {
    try {
      await writeStatusError(state, status);
      return;
    } catch {
      // fall through: the response cannot be written any more
    }
  }
  if (!res.writableEnded) res.destroy();
}
