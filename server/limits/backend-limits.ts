// Bounds on what kapi reads from servers it calls on a client's behalf or for itself
// (aggregated API servers): documents are buffered before they are parsed, so their size is
// capped; the nesting depth is the request bodies' (decode-limits.ts), checked before parsing.
// A backend that sends more is treated as failing, never as a reason to grow the replica.

/** an aggregated server's discovery answer (`/apis`, `/apis/<group>/<version>`) */
export const MAX_BACKEND_DISCOVERY_BYTES = 8 * 1024 * 1024;

/** an aggregated server's OpenAPI document (`/openapi/v2`, `/openapi/v3/...`); a full
 *  kube-apiserver-like v2 document is about 4 MiB */
export const MAX_BACKEND_OPENAPI_BYTES = 32 * 1024 * 1024;

/** how long one such fetch (or availability check) may take */
export const BACKEND_FETCH_TIMEOUT_MS = 5_000;
