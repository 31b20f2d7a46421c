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

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  431: 'Request Header Fields Too Large',
  501: 'Not Implemented',
  505: 'HTTP Version Not Supported',
};

/** Go's answer to a request head it cannot accept, written on the raw connection before it
 *  closes: the status line's text as the body (the reason after it), 501's text of its own */
export function goClientErrorResponse(status: 400 | 431 | 501 | 505, reason?: string): string {
  const line = `${status} ${STATUS_TEXT[status]}`;
  const body = status === 501 ? 'Unsupported transfer encoding' : reason && status !== 431 ? `${line}: ${reason}` : line;
  return `HTTP/1.1 ${line}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${body}`;
}
