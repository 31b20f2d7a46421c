// Bytes written to many responses and never changed afterwards (a watch event's encoded frame,
// sent to every watcher of that encoding). A transport may keep what it derives from such bytes
// (HTTP/1.1's chunk framing of them) for as long as the bytes live; bytes not marked may be a
// buffer that is filled again for the next write, and are framed afresh each time.

const shared = new WeakSet<Buffer>();

export function markShared(bytes: Buffer): Buffer {
  shared.add(bytes);
  return bytes;
}

export function isShared(bytes: Buffer): boolean {
  return shared.has(bytes);
}
