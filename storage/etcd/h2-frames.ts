// HTTP/2 frames (RFC 9113 section 4 and 6): the constants and the writers the unary-call
// connection (h2-connection.ts) uses, and the reader that cuts a byte stream into frames.

export const FRAME_HEADER_LENGTH = 9;

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

export const CONNECTION_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const DEFAULT_WINDOW_SIZE = 65_535;
export const MAX_WINDOW_SIZE = 2 ** 31 - 1;

/** writes a frame header at `offset` of `out` */
export function writeFrameHeader(out: Buffer, offset: number, length: number, type: number, flags: number, streamId: number): void {
  out[offset] = (length >>> 16) & 0xff;
  out[offset + 1] = (length >>> 8) & 0xff;
  out[offset + 2] = length & 0xff;
  out[offset + 3] = type;
  out[offset + 4] = flags;
  out.writeUInt32BE(streamId & 0x7fffffff, offset + 5);
}

export function frame(type: number, flags: number, streamId: number, payload?: Buffer): Buffer {
  const length = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + length);
  writeFrameHeader(out, 0, length, type, flags, streamId);
  payload?.copy(out, FRAME_HEADER_LENGTH);
  return out;
}

export function settingsFrame(settings: readonly (readonly [number, number])[]): Buffer {
  const payload = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FrameType.SETTINGS, 0, 0, payload);
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + 4);
  writeFrameHeader(out, 0, 4, FrameType.WINDOW_UPDATE, 0, streamId);
  out.writeUInt32BE(increment & 0x7fffffff, FRAME_HEADER_LENGTH);
  return out;
}

export function rstStreamFrame(streamId: number, errorCode: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + 4);
  writeFrameHeader(out, 0, 4, FrameType.RST_STREAM, 0, streamId);
  out.writeUInt32BE(errorCode, FRAME_HEADER_LENGTH);
  return out;
}

export function goawayFrame(lastStreamId: number, errorCode: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + 8);
  writeFrameHeader(out, 0, 8, FrameType.GOAWAY, 0, 0);
  out.writeUInt32BE(lastStreamId & 0x7fffffff, FRAME_HEADER_LENGTH);
  out.writeUInt32BE(errorCode, FRAME_HEADER_LENGTH + 4);
  return out;
}

export function pingFrame(payload: Buffer, ack: boolean): Buffer {
  return frame(FrameType.PING, ack ? Flag.ACK : 0, 0, payload);
}

/** called for each received frame; `payload` is a view of the received bytes */
export type FrameHandler = (type: number, flags: number, streamId: number, payload: Buffer) => void;

export class FrameSizeError extends Error {}

/** cuts received bytes into frames; keeps an incomplete frame's bytes for the next push */
export class FrameReader {
  private pending: Buffer | null = null;

  /** `maxFrameSize`: the SETTINGS_MAX_FRAME_SIZE we announced */
  constructor(private readonly maxFrameSize = DEFAULT_MAX_FRAME_SIZE) {}

  /** calls `onFrame` for each complete frame in what has arrived so far */
  push(chunk: Buffer, onFrame: FrameHandler): void {
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let offset = 0;
    while (buf.length - offset >= FRAME_HEADER_LENGTH) {
      const length = (buf[offset]! << 16) | (buf[offset + 1]! << 8) | buf[offset + 2]!;
      if (length > this.maxFrameSize) throw new FrameSizeError(`frame of ${length} bytes`);
      const end = offset + FRAME_HEADER_LENGTH + length;
      if (end > buf.length) break;
      onFrame(
        buf[offset + 3]!,
        buf[offset + 4]!,
        buf.readUInt32BE(offset + 5) & 0x7fffffff,
        buf.subarray(offset + FRAME_HEADER_LENGTH, end),
      );
      offset = end;
    }
    if (offset < buf.length) this.pending = buf.subarray(offset);
  }
}

/** a DATA or HEADERS payload without its padding (and, for HEADERS, without the priority
 *  fields); null when the padding is longer than the payload */
export function unpadded(payload: Buffer, flags: number, priorityFields: boolean): Buffer | null {
  let start = 0;
  let end = payload.length;
  if (flags & Flag.PADDED) {
    if (payload.length < 1) return null;
    end -= payload[0]!;
    start = 1;
  }
  if (priorityFields && flags & Flag.PRIORITY) start += 5;
  if (end < start) return null;
  return payload.subarray(start, end);
}
