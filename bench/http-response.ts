// Reads one HTTP/1.1 response from the bytes of a connection as they arrive: the status line
// and headers, then a body framed by content-length or chunked transfer coding. Chunk data is
// kept as the received slices, so a 50 MiB list costs one copy at the end, not one per read.

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD = 64 * 1024;
const MAX_LINE = 4096;
const EMPTY = Buffer.alloc(0);

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailer' | 'done';

export class HttpResponseReader {
  private state: State = 'head';
  /** bytes of a head, chunk-size line or trailer not complete yet */
  private partial: Buffer = EMPTY;
  private remaining = 0;
  private readonly parts: Buffer[] = [];
  private status = 0;
  private keepAlive = true;

  constructor(private readonly noBody: boolean) {}

  /** takes the next bytes; true once the whole response is in. Throws on bytes that are not HTTP. */
  push(data: Buffer): boolean {
    let at = 0;
    while (at < data.length || this.state === 'length') {
      switch (this.state) {
        case 'head': {
          const line = this.readUntil(data, at, HEAD_END, MAX_HEAD);
          if (!line) return false;
          this.parseHead(line.bytes);
          at = line.next;
          break;
        }
        case 'length': {
          const n = Math.min(this.remaining, data.length - at);
          if (n > 0) this.parts.push(data.subarray(at, at + n));
          at += n;
          this.remaining -= n;
          if (this.remaining > 0) return false;
          this.state = 'done';
          break;
        }
        case 'chunk-size': {
          const line = this.readUntil(data, at, CRLF, MAX_LINE);
          if (!line) return false;
          at = line.next;
          const text = line.bytes.toString('latin1');
          const size = Number.parseInt(text.split(';')[0]!.trim(), 16);
          if (!Number.isFinite(size) || size < 0) throw new Error(`bad chunk size line ${JSON.stringify(text)}`);
          this.remaining = size;
          this.state = size === 0 ? 'trailer' : 'chunk-data';
          break;
        }
        case 'chunk-data': {
          const n = Math.min(this.remaining, data.length - at);
          this.parts.push(data.subarray(at, at + n));
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            this.state = 'chunk-end';
            this.remaining = CRLF.length;
          }
          break;
        }
        case 'chunk-end': {
          const n = Math.min(this.remaining, data.length - at);
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = 'chunk-size';
          break;
        }
        case 'trailer': {
          const line = this.readUntil(data, at, CRLF, MAX_HEAD);
          if (!line) return false;
          at = line.next;
          if (line.bytes.length === 0) this.state = 'done';
          break;
        }
        case 'done':
          throw new Error('bytes after the end of a response');
      }
    }
    return this.state === 'done';
  }

  response(): { status: number; body: Buffer; keepAlive: boolean } {
    const body = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    return { status: this.status, body, keepAlive: this.keepAlive };
  }

  /**
   * the bytes before `delimiter` (with any kept from earlier pushes) and where in `data` the
   * bytes after it begin; undefined until the delimiter arrives
   */
  private readUntil(data: Buffer, at: number, delimiter: Buffer, max: number): { bytes: Buffer; next: number } | undefined {
    if (this.partial.length === 0) {
      const end = data.indexOf(delimiter, at);
      if (end >= 0) return { bytes: data.subarray(at, end), next: end + delimiter.length };
      this.partial = Buffer.from(data.subarray(at));
    } else {
      const kept = this.partial.length;
      const joined = Buffer.concat([this.partial, data.subarray(at)]);
      const end = joined.indexOf(delimiter);
      if (end >= 0) {
        this.partial = EMPTY;
        // the delimiter ends inside `data`, or an earlier push would have found it
        return { bytes: joined.subarray(0, end), next: at + end + delimiter.length - kept };
      }
      this.partial = joined;
    }
    if (this.partial.length > max) throw new Error('an HTTP head or line too long');
    return undefined;
  }

  private parseHead(head: Buffer): void {
    const lines = head.toString('latin1').split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!status) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(lines[0])}`);
    this.status = Number(status[1]);
    let length: number | undefined;
    let chunked = false;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') length = Number(value);
      else if (name === 'transfer-encoding') chunked = value.toLowerCase().includes('chunked');
      else if (name === 'connection') this.keepAlive = value.toLowerCase() !== 'close';
    }
    if (this.noBody || this.status === 204 || this.status === 304) this.state = 'done';
    else if (chunked) this.state = 'chunk-size';
    else if (length !== undefined && Number.isInteger(length) && length >= 0) {
      this.remaining = length;
      this.state = 'length';
    } else throw new Error('a response with neither content-length nor chunked coding');
  }
}
