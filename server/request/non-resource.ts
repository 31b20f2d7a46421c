// What a non-resource handler (discovery, OpenAPI, /version, /metrics, /status, ...) is given
// and answers.

import type { IncomingHttpHeaders } from 'node:http';
import type { UserInfo } from '../machinery/user.js';

/** what a non-resource provider (discovery, OpenAPI) is told about a request */
export interface NonResourceRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  user?: UserInfo;
}

/** a complete answer from a non-resource provider */
export interface RawResponse {
  status: number;
  body: string | Buffer;
  contentType: string;
  /** with an ETag, a matching If-None-Match gets 304 */
  etag?: string;
  headers?: Record<string, string>;
}

/** Answers the paths it owns; undefined for any other path. */
export type NonResourceHandler = (req: NonResourceRequest) => RawResponse | undefined | Promise<RawResponse | undefined>;
