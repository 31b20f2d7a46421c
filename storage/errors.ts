// Errors the storage layer raises. The HTTP layer maps each code to a Kubernetes Status
// (server/http/status.ts: statusFromStorageError); storage itself knows nothing of HTTP.

export type StorageErrorCode =
  | 'KeyNotFound' // 404 NotFound
  | 'KeyExists' // 409 AlreadyExists
  | 'ResourceVersionConflict' // 409 Conflict (stale resourceVersion or uid precondition)
  | 'InvalidObject' // 500: stored bytes do not decode
  | 'ResourceVersionTooOld' // 410 Gone, reason Expired ("too old resource version")
  | 'ContinueExpired' // 410 Gone, reason Expired (continue token older than compaction)
  | 'InvalidContinue' // 400 BadRequest
  | 'InvalidResourceVersion' // 400 BadRequest
  | 'TooLargeResourceVersion' // 504 Timeout "Too large resource version"
  | 'TooManyRequests' // 429 with Retry-After: the cache could not catch up in time
  | 'ReadConditionFailed' // 409: an optimistic read a write relied on changed (read-fence.ts)
  | 'RequestTooLarge' // 500 with etcd's words: the write is over etcd's --max-request-bytes
  | 'Unavailable'; // 503 etcd unreachable

export class StorageError extends Error {
  readonly code: StorageErrorCode;
  readonly key: string;
  /** for TooManyRequests / TooLargeResourceVersion: the suggested Retry-After in seconds */
  readonly retryAfterSeconds?: number;
  /** for ResourceVersionTooOld: the oldest revision still available */
  readonly oldestAvailable?: number;
  /** for ContinueExpired: a token that resumes after the same key at the latest revision */
  readonly continueToken?: string;

  constructor(
    code: StorageErrorCode,
    key: string,
    message: string,
    extra: { retryAfterSeconds?: number; oldestAvailable?: number; continueToken?: string } = {},
  ) {
    super(message);
    this.name = 'StorageError';
    this.code = code;
    this.key = key;
    this.retryAfterSeconds = extra.retryAfterSeconds;
    this.oldestAvailable = extra.oldestAvailable;
    this.continueToken = extra.continueToken;
  }
}

export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}
