// Reads the head of an HTTP/1.1 response from a raw socket: what a backend answers to an
// upgrade request, before the connection becomes a byte stream (101) or carries a body.

import type { Duplex } from 'node:stream';
import { MAX_RESPONSE_HEAD_BYTES } from '../limits/stream-limits.js';

export interface ResponseHead {
  status: number;
  /** lower-case names */
  headers: Record<string, string[]>;
  /** the head's bytes as received, blank line included */
  raw: Buffer;
  /** bytes that came after the head in the same reads */
  rest: Buffer;
}

export function headValue(head: ResponseHead, name: string): string {
  return head.headers[name]?.[0] ?? '';
}

function parse(raw: Buffer, rest: Buffer): ResponseHead {
  const lines = raw.toString('latin1').split(/\r?\n/);
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) throw new Error(`malformed HTTP response: ${JSON.stringify((lines[0] ?? '').slice(0, 100))}`);
  const headers: Record<string, string[]> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    (headers[line.slice(0, colon).trim().toLowerCase()] ??= []).push(line.slice(colon + 1).trim());
  }
  return { status: Number(m[1]), headers, raw, rest };
}

/** Resolves with the head once it is complete; the socket is paused afterwards. */
export function readResponseHead(socket: Duplex): Promise<ResponseHead> {
  return new Promise((resolve, reject) => {
    let buffered: Buffer = Buffer.alloc(0);
    const cleanup = (): void => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
      socket.off('close', onEnd);
    };
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const crlf = buffered.indexOf('\r\n\r\n');
      const lf = buffered.indexOf('\n\n');
      const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : -1;
      if (end < 0) {
        if (buffered.length > MAX_RESPONSE_HEAD_BYTES) {
          cleanup();
          reject(new Error(`response head exceeds ${MAX_RESPONSE_HEAD_BYTES} bytes`));
        }
        return;
      }
      cleanup();
      socket.pause();
      try {
        resolve(parse(buffered.subarray(0, end), buffered.subarray(end)));
      } catch (err) {
        reject(err);
      }
    };
    const onEnd = (): void => {
      cleanup();
      reject(new Error('connection closed before the response head'));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', onError);
    socket.resume();
  });
}
