// Request header limits as Go's net/http sets them for kube-apiserver, which leaves
// MaxHeaderBytes at its default (1 MiB):
//  - HTTP/1.1: the request line and headers may take 1 MiB plus the 4096 bytes of slack Go's
//    reader allows; beyond that Go answers a plain-text 431 and closes the connection. No
//    limit on the number of fields.
//  - HTTP/2: SETTINGS_MAX_HEADER_LIST_SIZE is 1 MiB plus 32 bytes of overhead for 10 typical
//    fields, and SETTINGS_MAX_FRAME_SIZE is Go's default read frame size (1 MiB), so a client
//    sends a large header block in a few frames. No small limit on the number of fields: each
//    field costs at least 32 bytes of the list size, which caps the count.
// Memory stays bounded per connection: an HTTP/1.1 connection parses one request head at a
// time; an HTTP/2 session's header blocks count against its session memory limit.

import type { Duplex } from 'node:stream';

const GO_DEFAULT_MAX_HEADER_BYTES = 1 << 20;
/** what Go's HTTP/1.1 server reads of a request head before answering 431 */
export const HTTP1_MAX_HEADER_BYTES = GO_DEFAULT_MAX_HEADER_BYTES + 4096;
/** HPACK's accounting: each field costs its name, its value and 32 bytes */
const HPACK_FIELD_OVERHEAD = 32;
/** Go's http2 server's SETTINGS_MAX_HEADER_LIST_SIZE */
export const HTTP2_MAX_HEADER_LIST_BYTES = GO_DEFAULT_MAX_HEADER_BYTES + 10 * HPACK_FIELD_OVERHEAD;
/** Go's http2 server's SETTINGS_MAX_FRAME_SIZE */
export const HTTP2_MAX_FRAME_BYTES = 1 << 20;
/** as many fields as fit in the header list (pseudo-headers included) */
export const HTTP2_MAX_HEADER_PAIRS = Math.ceil(HTTP2_MAX_HEADER_LIST_BYTES / HPACK_FIELD_OVERHEAD);

/** Go's answer to a request head it cannot accept, written on the raw connection */
function goClientErrorResponse(status: string): string {
  return `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status}`;
}

/**
 * Node's parser knows only the registered methods; Go accepts any token, and kube-apiserver
 * then finds no route for it: 405 MethodNotAllowed. The request cannot be read further, so
 * the connection closes after the answer.
 */
function methodNotAllowedResponse(): string {
  const body = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server does not allow this method on the requested resource',
    reason: 'MethodNotAllowed',
    details: {},
    code: 405,
  });
  return `HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * The HTTP/1.1 server's `clientError` listener: a head over the limit gets Go's 431, any other
 * unparseable request Go's 400; the connection then closes, as in Go.
 */
export function answerHttp1ClientError(err: Error & { code?: string }, socket: Duplex): void {
  // a client that went away, or one too slow to send its head: Go just closes
  if (!socket.writable || err.code === 'ECONNRESET' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.destroy();
    return;
  }
  if (err.code === 'HPE_INVALID_METHOD') {
    socket.end(methodNotAllowedResponse());
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
  socket.end(goClientErrorResponse(status));
}
