// Continue tokens in the etcd3 store's format, so that a first page served from the cache can
// be continued by the store (exact reads at the token's revision):
// base64url(JSON {"v":"meta.k8s.io/v1","rv":<revision>,"start":"<next key, relative to the
// listed prefix>"}).

export interface ContinueToken {
  revision: number;
  /** the first key of the next page, relative to the listed prefix */
  start: string;
}

export function encodeContinueToken(token: ContinueToken): string {
  const json = JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.revision, start: token.start });
  return Buffer.from(json).toString('base64url');
}
