// List continue tokens, byte-compatible with kube-apiserver's (k8s.io/apiserver
// pkg/storage/continue.go): unpadded base64url of the JSON
// {"v":"meta.k8s.io/v1","rv":<list revision>,"start":"<next key relative to the listed prefix>"}.
// A token from one replica (or from kube-apiserver itself) continues on any other.

import path from 'node:path';
import { StorageError } from '../errors.js';

const TOKEN_VERSION = 'meta.k8s.io/v1';

export interface ContinuePosition {
  /** the full etcd key to continue from (inclusive) */
  startKey: string;
  /** the revision to read at; 0 means "the latest" (kube-apiserver's rv -1 tokens) */
  revision: number;
}

/** Go's encoding/json escapes these; doing the same keeps tokens byte-identical */
function goJSONString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function encodeContinue(nextKey: string, keyPrefix: string, revision: number): string {
  if (!nextKey.startsWith(keyPrefix) || nextKey === keyPrefix) {
    throw new Error(`continue key ${JSON.stringify(nextKey)} is not under ${JSON.stringify(keyPrefix)}`);
  }
  const start = nextKey.slice(keyPrefix.length);
  const json = `{"v":${goJSONString(TOKEN_VERSION)},"rv":${revision},"start":${goJSONString(start)}}`;
  return Buffer.from(json, 'utf8').toString('base64url');
}

function invalid(key: string, detail: string): StorageError {
  return new StorageError('InvalidContinue', key, `invalid continue token: continue key is not valid${detail ? `: ${detail}` : ''}`);
}

/** Go's path.Clean for absolute paths: no empty, `.` or `..` segments, no trailing slash */
function cleanPath(p: string): string {
  const normalized = path.posix.normalize(p);
  return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
}

export function decodeContinue(token: string, keyPrefix: string): ContinuePosition {
  if (!/^[A-Za-z0-9_-]*$/.test(token)) throw invalid(keyPrefix, 'illegal base64 data');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (err) {
    throw invalid(keyPrefix, (err as Error).message);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid(keyPrefix, 'not a JSON object');
  const { v, rv, start } = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (v !== TOKEN_VERSION) {
    throw new StorageError(
      'InvalidContinue',
      keyPrefix,
      `invalid continue token: continue key is not valid: server does not recognize this encoded version ${String(v ?? '')}`,
    );
  }
  if (typeof rv !== 'number' || !Number.isSafeInteger(rv) || rv === 0) {
    throw new StorageError(
      'InvalidContinue',
      keyPrefix,
      'invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
  if (typeof start !== 'string' || start.length === 0) {
    throw new StorageError(
      'InvalidContinue',
      keyPrefix,
      'invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)',
    );
  }
  // the start key must stay inside the listed prefix: no way up the hierarchy
  const rooted = start.startsWith('/') ? start : `/${start}`;
  if (cleanPath(rooted) !== rooted) throw invalid(keyPrefix, start);
  // biome-ignore lint/complexity/useMathMinMax: a NaN revision must become 0, which Math.max would not do
  return { startKey: keyPrefix + rooted.slice(1), revision: rv > 0 ? rv : 0 };
}
