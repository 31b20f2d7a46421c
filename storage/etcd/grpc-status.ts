// A gRPC call's outcome as grpc clients read it from its HTTP/2 stream: grpc-status and the
// percent-encoded grpc-message of the trailers (or of the headers of a response without a
// body), else the HTTP status, else how the stream ended (reset, connection lost).

import { GrpcStatus } from './grpc-codes.js';
import type { StreamListener } from './h2-connection.js';
import { ErrorCode } from './h2-frames.js';

export interface CallFailure {
  code: number;
  details: string;
  /** the request certainly never reached the server */
  notSent: boolean;
}

/** what a gRPC client makes of an HTTP status that came without a grpc-status */
function codeOfHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcStatus.UNAVAILABLE;
    default:
      return GrpcStatus.UNKNOWN;
  }
}

function codeOfResetStream(rstCode: number): number {
  if (rstCode === ErrorCode.REFUSED_STREAM) return GrpcStatus.UNAVAILABLE;
  if (rstCode === ErrorCode.CANCEL) return GrpcStatus.CANCELLED;
  if (rstCode === ErrorCode.ENHANCE_YOUR_CALM) return GrpcStatus.RESOURCE_EXHAUSTED;
  if (rstCode === ErrorCode.INADEQUATE_SECURITY) return GrpcStatus.PERMISSION_DENIED;
  return GrpcStatus.INTERNAL;
}

function grpcMessage(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function failure(code: number, details: string, notSent = false): CallFailure {
  return { code, details, notSent };
}

/** the status of one call, from the header blocks of its stream */
export class CallStatus {
  private httpStatus = 0;
  private grpcStatus: number | undefined;
  private grpcDetails = '';

  /** reads response headers or trailers */
  read(fields: string[]): void {
    let grpcMessageText: string | undefined;
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i]!;
      const value = fields[i + 1]!;
      if (name === ':status') this.httpStatus = Number(value);
      else if (name === 'grpc-status') this.grpcStatus = Number(value);
      else if (name === 'grpc-message') grpcMessageText = grpcMessageText === undefined ? value : `${grpcMessageText},${value}`;
    }
    if (this.grpcStatus !== undefined) this.grpcDetails = grpcMessage(grpcMessageText ?? '');
  }

  /** the server said how the call ended (a grpc-status, or an HTTP error status) */
  get known(): boolean {
    return this.grpcStatus !== undefined || (this.httpStatus !== 0 && this.httpStatus !== 200);
  }

  /** the failure of a stream the server ended; undefined when it ended with grpc-status OK */
  ended(): CallFailure | undefined {
    if (this.grpcStatus !== undefined) return this.grpcStatus === GrpcStatus.OK ? undefined : failure(this.grpcStatus, this.grpcDetails);
    if (this.httpStatus !== 0 && this.httpStatus !== 200) {
      return failure(codeOfHttpStatus(this.httpStatus), `Received HTTP status code ${this.httpStatus}`);
    }
    // a stream that ended without a status tells as little as a broken connection
    return failure(GrpcStatus.UNAVAILABLE, 'Connection to etcd lost');
  }

  /** the failure of a stream the server reset before saying how the call ended */
  reset(errorCode: number): CallFailure {
    // the server refused the stream before processing anything on it
    if (errorCode === ErrorCode.REFUSED_STREAM) return failure(GrpcStatus.UNAVAILABLE, 'Stream refused by server', true);
    if (errorCode === ErrorCode.NO_ERROR) return failure(GrpcStatus.UNAVAILABLE, 'Connection to etcd lost');
    return failure(codeOfResetStream(errorCode), `Received RST_STREAM with code ${errorCode}`);
  }

  /** the failure of a call whose connection broke (`notSent`: before the stream started) */
  lost(notSent: boolean, cause: Error | undefined): CallFailure {
    const why = cause ? `: ${cause.message}` : '';
    return notSent
      ? failure(GrpcStatus.UNAVAILABLE, `No connection established${why}`, true)
      : failure(GrpcStatus.UNAVAILABLE, `Connection to etcd lost${why}`);
  }
}

/**
 * A call's stream events as grpc clients read them: header blocks give the status, a reset
 * after a known status ends the call as the server ended it, a reset before it or a lost
 * connection fails it. What data and the end mean is the call's own.
 */
export abstract class CallListener implements StreamListener {
  protected readonly status = new CallStatus();
  /** the call's outcome is known: later stream events change nothing */
  protected abstract over: boolean;

  abstract onData(chunk: Buffer): void;
  abstract onEnd(): void;
  protected abstract failWith(failure: CallFailure): void;

  onHeaders(fields: string[]): void {
    this.status.read(fields);
  }

  onReset(errorCode: number): void {
    if (this.over) return;
    if (this.status.known) return this.onEnd();
    this.failWith(this.status.reset(errorCode));
  }

  onLost(notSent: boolean, cause: Error | undefined): void {
    if (this.over) return;
    this.failWith(this.status.lost(notSent, cause));
  }
}
