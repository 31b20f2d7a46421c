// One streaming gRPC call on our HTTP/2 connection (a watch): requests leave as messages on
// the stream as they come, responses are cut out of its DATA as it arrives and handed over
// decoded, one by one; the call ends once, with the status its stream ended with.

import { GrpcStatus } from './grpc-codes.js';
import { EtcdError } from './errors.js';
import { CallListener, type CallFailure } from './grpc-status.js';
import { GRPC_MESSAGE_PREFIX_BYTES, type H2Connection, type H2Stream } from './h2-connection.js';

/** the largest message taken (a Buffer's limit; etcd's own is lower) */
const MAX_MESSAGE_BYTES = 2 ** 31 - 1;

export interface StreamingCallHandlers<Res> {
  onMessage(res: Res): void;
  /** the call is over: null when the server ended it with grpc-status OK. Not called once
   *  the call was cancelled. */
  onClose(err: EtcdError | null): void;
}

export class StreamingCall<Req, Res> extends CallListener {
  private stream: H2Stream | null = null;
  /** received bytes that are not a whole message yet */
  private partial: Buffer[] = [];
  private partialLength = 0;
  /** how many bytes `partial` must reach before another message can be cut */
  private needed = GRPC_MESSAGE_PREFIX_BYTES;
  protected over = false;

  constructor(
    private readonly endpoint: string,
    private readonly connection: H2Connection,
    private readonly serialize: (req: Req) => Buffer,
    private readonly deserialize: (bytes: Buffer) => Res,
    private readonly handlers: StreamingCallHandlers<Res>,
  ) {
    super();
  }

  start(headerBlock: Buffer): void {
    this.stream = this.connection.startStream(headerBlock, this);
  }

  write(req: Req): void {
    if (this.over || !this.stream) return;
    this.connection.sendMessage(this.stream, this.serialize(req));
  }

  /** ends the call from our side (RST_STREAM); no handler is called after this */
  cancel(): void {
    if (this.over) return;
    this.over = true;
    if (this.stream) this.connection.cancel(this.stream);
  }

  onData(chunk: Buffer): void {
    if (this.over) return;
    let data = chunk;
    if (this.partialLength > 0) {
      this.partial.push(chunk);
      this.partialLength += chunk.length;
      // a large message comes in many frames: joined once it is all there, not per frame
      if (this.partialLength < this.needed) return;
      data = Buffer.concat(this.partial, this.partialLength);
      this.partial = [];
      this.partialLength = 0;
    }
    let at = 0;
    while (data.length - at >= GRPC_MESSAGE_PREFIX_BYTES) {
      // no grpc-encoding is offered, so a compressed message is a protocol violation
      if (data[at] !== 0) return this.fail(GrpcStatus.INTERNAL, 'compressed response message that was not asked for');
      const size = data.readUInt32BE(at + 1);
      if (size > MAX_MESSAGE_BYTES - GRPC_MESSAGE_PREFIX_BYTES)
        return this.fail(GrpcStatus.RESOURCE_EXHAUSTED, `response message of ${size} bytes`);
      const end = at + GRPC_MESSAGE_PREFIX_BYTES + size;
      if (end > data.length) break;
      let res: Res;
      try {
        res = this.deserialize(data.subarray(at + GRPC_MESSAGE_PREFIX_BYTES, end));
      } catch (err) {
        return this.fail(GrpcStatus.INTERNAL, `etcd response could not be decoded: ${(err as Error).message}`);
      }
      at = end;
      this.handlers.onMessage(res);
      // the handler may have cancelled the call
      if (this.over) return;
    }
    if (at === data.length) {
      this.needed = GRPC_MESSAGE_PREFIX_BYTES;
      return;
    }
    const rest = data.subarray(at);
    this.partial = [rest];
    this.partialLength = rest.length;
    this.needed = rest.length >= GRPC_MESSAGE_PREFIX_BYTES ? GRPC_MESSAGE_PREFIX_BYTES + rest.readUInt32BE(1) : GRPC_MESSAGE_PREFIX_BYTES;
  }

  onEnd(): void {
    if (this.over) return;
    const failed = this.status.ended();
    if (!failed && this.partialLength > 0)
      return this.close({ code: GrpcStatus.INTERNAL, details: 'stream ended inside a message', notSent: false });
    this.close(failed ?? null);
  }

  protected failWith(failure: CallFailure): void {
    this.close(failure);
  }

  /** a failure found here: the stream is reset and the call ends with it */
  private fail(code: number, details: string): void {
    if (this.stream) this.connection.cancel(this.stream);
    this.close({ code, details, notSent: false });
  }

  private close(failure: CallFailure | null): void {
    this.over = true;
    this.partial = [];
    this.partialLength = 0;
    this.handlers.onClose(failure ? new EtcdError(failure.code, failure.details, this.endpoint, failure.notSent) : null);
  }
}
