// /version: kube-apiserver's version.Info, fields in its order.

import { writeRawJson } from '../request/response.js';
import type { RequestState } from '../request/types.js';
import type { VersionInfo } from '../machinery/version.js';

export async function serveVersion(state: RequestState, info: VersionInfo): Promise<void> {
  await writeRawJson(state, 200, info);
}
