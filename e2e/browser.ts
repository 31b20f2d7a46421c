// Headless Debian chromium driven over the Chrome DevTools protocol, for tests of the pages
// kapi serves or writes: navigate, evaluate, screenshot, and collect console errors. The
// protocol runs over a WebSocket; node 20 has no client, so a small one is here (text frames,
// client masking, no extensions). Chromium runs on 127.0.0.1 with a fresh profile and is
// stopped by its PID.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

/** a WebSocket client connection: text messages only, which is all DevTools sends */
class WebSocketConnection {
  private buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  onMessage: (text: string) => void = () => {};
  onClose: () => void = () => {};

  private constructor(private readonly socket: net.Socket) {}

  static open(url: string): Promise<WebSocketConnection> {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(u.port), u.hostname);
      const key = randomBytes(16).toString('base64');
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        if (!/^HTTP\/1\.1 101/.test(head.toString('latin1', 0, end))) {
          reject(new Error(`WebSocket upgrade refused: ${head.toString('latin1', 0, end)}`));
          socket.destroy();
          return;
        }
        const ws = new WebSocketConnection(socket);
        socket.on('data', (c: Buffer) => ws.receive(c));
        socket.on('close', () => ws.onClose());
        ws.receive(head.subarray(end + 4));
        resolve(ws);
      };
      socket.on('data', onData);
      socket.once('error', reject);
      socket.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
  }

  send(text: string): void {
    const payload = Buffer.from(text);
    const len = payload.length;
    const header =
      len < 126 ? Buffer.from([0x81, 0x80 | len]) : len < 65536 ? Buffer.from([0x81, 0x80 | 126, len >> 8, len & 255]) : Buffer.alloc(10);
    if (len >= 65536) {
      header[0] = 0x81;
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(len), 2);
    }
    const mask = randomBytes(4);
    const masked = Buffer.alloc(len);
    for (let i = 0; i < len; i++) masked[i] = payload[i]! ^ mask[i & 3]!;
    this.socket.write(Buffer.concat([header, mask, masked]));
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.buffer.length < 2) return;
      const fin = (this.buffer[0]! & 0x80) !== 0;
      const opcode = this.buffer[0]! & 0x0f;
      let len = this.buffer[1]! & 0x7f;
      let at = 2;
      if (len === 126) {
        if (this.buffer.length < 4) return;
        len = this.buffer.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (this.buffer.length < 10) return;
        len = Number(this.buffer.readBigUInt64BE(2));
        at = 10;
      }
      if (this.buffer.length < at + len) return;
      const payload = this.buffer.subarray(at, at + len);
      this.buffer = this.buffer.subarray(at + len);
      if (opcode === 0x8) {
        this.socket.end();
        return;
      }
      if (opcode === 0x9) continue; // ping: DevTools does not send them; nothing to answer
      if (opcode === 0x1 || opcode === 0x0) {
        this.fragments.push(Buffer.from(payload));
        if (fin) {
          const text = Buffer.concat(this.fragments).toString();
          this.fragments = [];
          this.onMessage(text);
        }
      }
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

interface ProtocolMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

export interface BrowserPage {
  /** console errors, uncaught exceptions and failed loads seen so far */
  readonly errors: string[];
  /** extra headers on every request the page makes (e.g. Authorization) */
  setHeaders(headers: Record<string, string>): Promise<void>;
  navigate(url: string): Promise<void>;
  evaluate<T>(expression: string): Promise<T>;
  /** waits until `expression` is truthy in the page */
  waitFor(expression: string, timeoutMs: number): Promise<void>;
  screenshot(width: number, height: number): Promise<Buffer>;
}

export interface Browser {
  page: BrowserPage;
  stop(): Promise<void>;
}

export async function startChromium(): Promise<Browser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'kapi-chromium-'));
  const child: ChildProcess = spawn(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--ignore-certificate-errors',
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    // chromium's helper processes can still be writing the profile when the browser exits (on
    // a loaded machine for seconds): a profile left behind in the temp directory fails no test
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 50, retryDelay: 100 });
    } catch (err) {
      process.emitWarning(`chromium profile ${profile} left behind: ${(err as Error).message}`);
    }
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`chromium did not start its DevTools server: ${text}`)), 30_000);
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (c: string) => {
        text += c;
        const m = /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(text);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.once('exit', (code) => reject(new Error(`chromium exited (${code}): ${text}`)));
    });
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { type: string; webSocketDebuggerUrl: string }[];
    const target = targets.find((t) => t.type === 'page');
    if (!target) throw new Error('chromium has no page target');
    const ws = await WebSocketConnection.open(target.webSocketDebuggerUrl);
    const page = await attach(ws);
    return {
      page,
      async stop() {
        ws.close();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function attach(ws: WebSocketConnection): Promise<BrowserPage> {
  let nextId = 1;
  const pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  const listeners = new Map<string, ((p: Record<string, unknown>) => void)[]>();
  const errors: string[] = [];
  ws.onMessage = (text) => {
    const msg = JSON.parse(text) as ProtocolMessage;
    if (msg.id !== undefined) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(msg.error.message));
      else p?.resolve(msg.result ?? {});
    } else if (msg.method) {
      for (const l of listeners.get(msg.method) ?? []) l(msg.params ?? {});
    }
  };
  ws.onClose = () => {
    for (const p of pending.values()) p.reject(new Error('DevTools connection closed'));
    pending.clear();
  };
  const send = (method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  const on = (method: string, l: (p: Record<string, unknown>) => void): void => {
    listeners.set(method, [...(listeners.get(method) ?? []), l]);
  };
  on('Runtime.consoleAPICalled', (p) => {
    if (p.type === 'error') errors.push(`console.error: ${JSON.stringify(p.args)}`);
  });
  on('Runtime.exceptionThrown', (p) => errors.push(`exception: ${JSON.stringify(p.exceptionDetails)}`));
  on('Log.entryAdded', (p) => {
    const entry = p.entry as { level: string; text: string; url?: string };
    if (entry.level === 'error') errors.push(`${entry.text} ${entry.url ?? ''}`.trim());
  });
  await send('Runtime.enable');
  await send('Log.enable');
  await send('Page.enable');
  await send('Network.enable');

  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = (await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value: T };
      exceptionDetails?: unknown;
    };
    if (r.exceptionDetails) throw new Error(`evaluate ${expression}: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value;
  };
  return {
    errors,
    async setHeaders(headers) {
      await send('Network.setExtraHTTPHeaders', { headers });
    },
    async navigate(url) {
      const loaded = new Promise<void>((resolve) => on('Page.loadEventFired', () => resolve()));
      const r = (await send('Page.navigate', { url })) as { errorText?: string };
      if (r.errorText) throw new Error(`navigate ${url}: ${r.errorText}`);
      await loaded;
    },
    evaluate,
    async waitFor(expression, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (await evaluate<boolean>(`Boolean(${expression})`)) return;
        if (Date.now() > deadline) throw new Error(`page: ${expression} still false after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async screenshot(width, height) {
      await send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
      const r = (await send('Page.captureScreenshot', { format: 'png' })) as { data: string };
      return Buffer.from(r.data, 'base64');
    },
  };
}
