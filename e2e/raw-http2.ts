// A minimal HTTP/2 client that sends one request's header block in frames as large as the
// server allows (as Go's client does; node's own client never sends HEADERS or CONTINUATION
// frames over 16 KiB), and reports how the server answered: the status when it is one HPACK's
// static table names, or the stream reset or GOAWAY error code.

import tls from 'node:tls';
import { Flag, FrameType, Setting, frame } from '../storage/etcd/h2-frames.js';
import { encodeLiteralNewName } from '../storage/etcd/hpack.js';

export interface RawHttp2Answer {
  /** the response's :status when it came as a static-table index (200, 204, 206, 304, 400, 404, 500) */
  status?: number;
  /** a response HEADERS frame arrived whose :status is not a static-table index */
  otherHeaders?: boolean;
  /** RST_STREAM error code */
  reset?: number;
  /** GOAWAY error code */
  goaway?: number;
}

export interface RawHttp2Options {
  port: number;
  path: string;
  headers: [string, string][];
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

const STATIC_STATUS: Record<number, number> = { 8: 200, 9: 204, 10: 206, 11: 304, 12: 400, 13: 404, 14: 500 };

const { DATA, HEADERS, RST_STREAM, SETTINGS, GOAWAY, CONTINUATION } = FrameType;
const { END_STREAM, END_HEADERS, ACK } = Flag;
const SETTINGS_MAX_FRAME_SIZE = Setting.MAX_FRAME_SIZE;

export function rawHttp2Get(opts: RawHttp2Options, timeoutMs = 60_000): Promise<RawHttp2Answer> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port: opts.port,
      ALPNProtocols: ['h2'],
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      servername: 'localhost',
    });
    const timer = setTimeout(() => finish(undefined, new Error('no answer from the server in time')), timeoutMs);
    let done = false;
    const finish = (answer?: RawHttp2Answer, err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(answer!);
    };
    let sent = false;
    const sendRequest = (maxFrame: number): void => {
      sent = true;
      const fields: [string, string][] = [
        [':method', 'GET'],
        [':scheme', 'https'],
        [':authority', `127.0.0.1:${opts.port}`],
        [':path', opts.path],
        ...opts.headers,
      ];
      const block = Buffer.concat(fields.map(([n, v]) => encodeLiteralNewName(n, v)));
      const frames: Buffer[] = [];
      for (let offset = 0; offset < block.length || offset === 0; offset += maxFrame) {
        const piece = block.subarray(offset, offset + maxFrame);
        const last = offset + maxFrame >= block.length;
        frames.push(
          offset === 0
            ? frame(HEADERS, END_STREAM | (last ? END_HEADERS : 0), 1, piece)
            : frame(CONTINUATION, last ? END_HEADERS : 0, 1, piece),
        );
      }
      socket.write(Buffer.concat(frames));
    };
    socket.on('secureConnect', () => {
      socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(SETTINGS, 0, 0, Buffer.alloc(0))]));
    });
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) return;
        const type = buffered[3]!;
        const flags = buffered[4]!;
        const streamId = buffered.readUInt32BE(5) & 0x7fffffff;
        const payload = buffered.subarray(9, 9 + length);
        buffered = buffered.subarray(9 + length);
        if (type === SETTINGS && !(flags & ACK)) {
          let maxFrame = 16384;
          for (let i = 0; i + 6 <= payload.length; i += 6)
            if (payload.readUInt16BE(i) === SETTINGS_MAX_FRAME_SIZE) maxFrame = payload.readUInt32BE(i + 2);
          socket.write(frame(SETTINGS, ACK, 0, Buffer.alloc(0)));
          if (!sent) sendRequest(maxFrame);
        } else if (type === HEADERS && streamId === 1) {
          const padded = flags & 0x8 ? 1 : 0;
          const priority = flags & 0x20 ? 5 : 0;
          const first = payload[padded + priority]!;
          const index = first & 0x7f;
          if (first & 0x80 && STATIC_STATUS[index]) finish({ status: STATIC_STATUS[index] });
          else finish({ otherHeaders: true });
        } else if (type === RST_STREAM && streamId === 1) {
          finish({ reset: payload.readUInt32BE(0) });
        } else if (type === GOAWAY) {
          finish({ goaway: payload.readUInt32BE(4) });
        } else if (type === DATA) {
          // not looked at
        }
      }
    });
    socket.on('error', (err) => finish(undefined, err));
    socket.on('close', () => finish(undefined, new Error('connection closed without an answer')));
  });
}
