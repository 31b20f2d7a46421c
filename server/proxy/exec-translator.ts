// kube's StreamTranslatorHandler (TranslateStreamCloseWebsocketRequests, on in 1.33): a
// client speaking the v5.channel.k8s.io WebSocket protocol for exec or attach is answered by
// kapi itself, which opens a SPDY connection to the kubelet and carries each channel over a
// SPDY stream. The result on the error channel is written as kube writes it: a Success
// Status, a NonZeroExitCode Status with the ExitCode cause, or the failure as an internal
// error. Every buffer here is bounded: the kubelet's error stream is capped, and a client or
// kubelet that cannot keep up pauses the other side rather than growing a queue.

import type { Duplex } from 'node:stream';
import { SpdyConnection, type SpdyStream } from '../streaming/spdy.js';
import { handshakeResponse, WebSocketConnection, OPCODE_BINARY } from '../streaming/websocket.js';
import { STREAM_HIGH_WATER_BYTES } from '../limits/stream-limits.js';
import type { Backend } from './kubelet-client.js';
import { openUpgrade } from './upgrade.js';
import { StatusError } from '../machinery/status.js';
import {
  CHANNEL_CLOSE,
  CHANNEL_ERROR,
  CHANNEL_RESIZE,
  CHANNEL_STDERR,
  CHANNEL_STDIN,
  CHANNEL_STDOUT,
  CHANNEL_V5,
  SPDY_REMOTE_COMMAND_PROTOCOLS,
  STREAM_TYPE_ERROR,
  STREAM_TYPE_RESIZE,
  STREAM_TYPE_STDERR,
  STREAM_TYPE_STDIN,
  STREAM_TYPE_STDOUT,
} from './channels.js';

/** the most the kubelet may write on the error stream (a Status is a few hundred bytes) */
const MAX_ERROR_STREAM_BYTES = 64 * 1024;

export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export interface TranslateRequest {
  socket: Duplex;
  head: Buffer;
  key: string;
  headers: Record<string, string | string[]>;
}

interface KubeStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: { causes?: { reason?: string; message?: string }[] };
}

/** the Status kube's translator writes for what the kubelet's error stream said */
export function resultStatus(errorStream: string): Record<string, unknown> {
  if (errorStream.trim() === '') return { metadata: {}, status: 'Success' };
  let status: KubeStatus;
  try {
    status = JSON.parse(errorStream) as KubeStatus;
  } catch (err) {
    return internal(`error stream protocol error: ${(err as Error).message} in "${errorStream}"`);
  }
  if (status.status === 'Success') return { metadata: {}, status: 'Success' };
  if (status.status === 'Failure' && status.reason === 'NonZeroExitCode') {
    if (!status.details) return internal('error stream protocol error: details must be set');
    const cause = status.details.causes?.find((c) => c.reason === 'ExitCode');
    if (!cause) return internal('error stream protocol error: no ExitCode cause given');
    const text = cause.message ?? '';
    const code = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!(code <= 255)) return internal(`error stream protocol error: invalid exit code value ${JSON.stringify(text)}`);
    return {
      metadata: {},
      status: 'Failure',
      message: `command terminated with non-zero exit code: command terminated with exit code ${code}`,
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
    };
  }
  if (status.status !== 'Failure') return internal('error stream protocol error: unknown error');
  return internal(status.message ?? '');
}

function internal(message: string): Record<string, unknown> {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  };
}

function statusFromError(err: unknown): Record<string, unknown> {
  if (err instanceof StatusError && err.reason !== '') {
    const s = err.toStatus();
    return { metadata: {}, status: s.status, message: s.message, reason: s.reason, details: s.details, code: s.code };
  }
  return internal(err instanceof Error ? err.message : String(err));
}

function message(channel: number, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from([channel]), data]);
}

/** serves one v5 WebSocket exec/attach by way of a SPDY connection to the kubelet */
export async function translateToSpdy(req: TranslateRequest, backend: Backend, opts: StreamOptions, signal: AbortSignal): Promise<void> {
  req.socket.write(handshakeResponse(req.key, CHANNEL_V5));
  let spdy: SpdyConnection | undefined;
  let stdin: SpdyStream | undefined;
  let resize: SpdyStream | undefined;
  let clientGone = false;
  // what the client sends before the kubelet's streams exist waits here (the socket is
  // paused once it holds more than the high-water mark)
  let early: Buffer[] | undefined = [];
  let earlyBytes = 0;
  const deliver = (data: Buffer): void => {
    const channel = data[0];
    const payload = data.subarray(1);
    if (channel === CHANNEL_CLOSE) {
      if (payload[0] === CHANNEL_STDIN) stdin?.end();
      return;
    }
    const target = channel === CHANNEL_STDIN ? stdin : channel === CHANNEL_RESIZE ? resize : undefined;
    if (target && !target.write(payload)) {
      ws.pause();
      spdy?.socket.once('drain', () => ws.resume());
    }
  };
  let closeResolve!: () => void;
  const closed = new Promise<void>((r) => (closeResolve = r));
  const ws = new WebSocketConnection(
    req.socket,
    {
      onMessage: (opcode, data) => {
        if (opcode !== OPCODE_BINARY || data.length === 0) return;
        if (!early) return deliver(data);
        early.push(data);
        earlyBytes += data.length;
        if (earlyBytes > STREAM_HIGH_WATER_BYTES) ws.pause();
      },
      onClose: () => {
        clientGone = true;
        spdy?.close();
        closeResolve();
      },
    },
    'server',
    req.head,
  );
  const abort = (): void => ws.close();
  signal.addEventListener('abort', abort, { once: true });
  // the request ended before the translation began: no 'abort' is left to close the client's side
  if (signal.aborted) abort();
  // the first message tells the client which channel carries output (kube writes it empty)
  ws.sendBinary(Buffer.from([opts.stdout ? CHANNEL_STDOUT : opts.stderr ? CHANNEL_STDERR : CHANNEL_ERROR]));

  const finish = (status: Record<string, unknown>): void => {
    if (!clientGone) ws.sendBinary(message(CHANNEL_ERROR, Buffer.from(JSON.stringify(status))));
    ws.close();
    spdy?.close();
  };

  try {
    const { backend: conn, head } = await openUpgrade(backend, {
      method: 'POST',
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'SPDY/3.1',
        'X-Stream-Protocol-Version': SPDY_REMOTE_COMMAND_PROTOCOLS,
      },
    });
    if (head.status !== 101) {
      const body = head.rest.toString('utf8').slice(0, 1024);
      conn.destroy();
      throw new Error(`unable to upgrade connection: ${upgradeFailureText(body)}`);
    }
    if (clientGone) {
      conn.destroy();
      return;
    }
    spdy = new SpdyConnection(conn, 'client', { head: head.rest, onClose: () => ws.close() });
    const open = (type: string): SpdyStream => spdy!.openStream({ streamtype: [type] });
    const errorStream = open(STREAM_TYPE_ERROR);
    if (opts.stdin) stdin = open(STREAM_TYPE_STDIN);
    const outputs: Promise<void>[] = [];
    const relay = (stream: SpdyStream, channel: number): Promise<void> =>
      new Promise((resolve) => {
        stream.on('data', (data: Buffer) => {
          if (!ws.sendBinary(message(channel, data)) || req.socket.writableLength > STREAM_HIGH_WATER_BYTES) {
            spdy!.pause();
            req.socket.once('drain', () => spdy!.resume());
          }
        });
        stream.once('end', () => resolve());
        stream.once('close', () => resolve());
      });
    if (opts.stdout) outputs.push(relay(open(STREAM_TYPE_STDOUT), CHANNEL_STDOUT));
    if (opts.stderr && !opts.tty) outputs.push(relay(open(STREAM_TYPE_STDERR), CHANNEL_STDERR));
    if (opts.tty) resize = open(STREAM_TYPE_RESIZE);
    const waiting = early;
    early = undefined;
    for (const data of waiting) deliver(data);
    ws.resume();
    const errorText = new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      let total = 0;
      errorStream.on('data', (d: Buffer) => {
        total += d.length;
        if (total <= MAX_ERROR_STREAM_BYTES) chunks.push(d);
      });
      const done = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
      errorStream.once('end', done);
      errorStream.once('close', done);
    });
    await Promise.race([Promise.all(outputs), closed]);
    const text = await Promise.race([errorText, closed.then(() => '')]);
    finish(resultStatus(text));
  } catch (err) {
    finish(statusFromError(err));
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/** the text client-go reports for a refused SPDY upgrade: the Status message when the body is one */
function upgradeFailureText(body: string): string {
  const start = body.indexOf('{');
  if (start >= 0) {
    try {
      const s = JSON.parse(body.slice(start)) as { kind?: string; message?: string };
      if (s.kind === 'Status' && s.message) return s.message;
    } catch {
      // not a Status: the body as it is
    }
  }
  return body.trim();
}
