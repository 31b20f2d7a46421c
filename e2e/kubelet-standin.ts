// A stand-in for the kubelet's API, enough for kapi's connect subresources: HTTPS on a
// loopback port that requires a client certificate from its own CA, /containerLogs (follow,
// tailLines, timestamps, sinceSeconds, limitBytes), /exec and /attach over SPDY/3.1 with the
// v4 channel protocol (error, stdin, stdout, stderr, resize streams; the exit code as a
// NonZeroExitCode Status), /portForward over SPDY (data streams joined to 127.0.0.1:<port>)
// and plain HTTP answers on any other path (for nodes/proxy). Commands it runs: `cat`,
// `echo <words>`, `sh -c 'exit <n>'`, `stty size` (a TTY's first resize as `rows cols`);
// attach echoes stdin after a greeting.

import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { SpdyConnection, type SpdyStream } from '../server/streaming/spdy.js';
import assert from 'node:assert/strict';
import { freePort, type KubeHttpClient } from './harness.js';

export interface KubeletStandin {
  port: number;
  /** PEMs for kapi's --kubelet-certificate-authority and --kubelet-client-certificate/-key */
  caPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  /** log lines per `<namespace>/<pod>/<container>` */
  logs: Map<string, string[]>;
  /** every request path seen, for assertions */
  seen: string[];
  close(): Promise<void>;
}

const LOG_EPOCH = Date.parse('2025-01-01T00:00:00Z');

function logLines(lines: string[], q: URLSearchParams): string {
  let selected = lines.map((text, i) => ({ text, at: new Date(LOG_EPOCH + i * 1000) }));
  const tail = q.get('tailLines');
  if (tail !== null) selected = selected.slice(Math.max(0, selected.length - Number(tail)));
  const out = selected.map((l) => (q.get('timestamps') === 'true' ? `${l.at.toISOString()} ${l.text}\n` : `${l.text}\n`)).join('');
  const limit = q.get('limitBytes');
  return limit !== null ? out.slice(0, Number(limit)) : out;
}

function exitStatus(code: number): string {
  if (code === 0) return JSON.stringify({ metadata: {}, status: 'Success' });
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command, exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  });
}

const REMOTE_COMMAND_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];

function chooseProtocol(req: IncomingMessage, supported: string[]): string | undefined {
  const offered = String(req.headers['x-stream-protocol-version'] ?? '')
    .split(',')
    .map((s) => s.trim());
  return offered.find((p) => supported.includes(p));
}

function upgradeTo(socket: Duplex, protocol: string): void {
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`,
  );
}

function refuse(socket: Duplex, code: number, text: string): void {
  socket.end(
    `HTTP/1.1 ${code} Refused\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

function serveRemoteCommand(socket: Duplex, head: Buffer, q: URLSearchParams, kind: 'exec' | 'attach'): void {
  const wantStdin = q.get('input') === '1';
  const wantStdout = q.get('output') === '1';
  const tty = q.get('tty') === '1';
  const wantStderr = q.get('error') === '1' && !tty;
  const command = q.getAll('command');
  const streams = new Map<string, SpdyStream>();
  const expected = 1 + Number(wantStdin) + Number(wantStdout) + Number(wantStderr) + Number(tty);
  let started = false;
  const conn = new SpdyConnection(socket, 'server', {
    head,
    onStream: (stream) => {
      stream.reply();
      streams.set(stream.header('streamtype'), stream);
      if (!started && streams.size >= expected) {
        started = true;
        run();
      }
    },
  });
  const finish = (code: number): void => {
    streams.get('stdout')?.end();
    streams.get('stderr')?.end();
    const error = streams.get('error');
    error?.write(Buffer.from(exitStatus(code)));
    error?.end();
    setTimeout(() => conn.close(), 50);
  };
  const run = (): void => {
    const stdout = streams.get('stdout');
    const stdin = streams.get('stdin');
    if (kind === 'attach') {
      stdout?.write(Buffer.from('attached\n'));
      if (!stdin) return finish(0);
      stdin.on('data', (d: Buffer) => stdout?.write(d));
      stdin.once('end', () => finish(0));
      return;
    }
    if (command[0] === 'cat') {
      if (!stdin) return finish(0);
      stdin.on('data', (d: Buffer) => stdout?.write(d));
      stdin.once('end', () => finish(0));
      return;
    }
    if (command[0] === 'stty' && command[1] === 'size') {
      const resize = streams.get('resize');
      if (!resize) {
        streams.get('stderr')?.write(Buffer.from('stty: not a tty\n'));
        return finish(1);
      }
      resize.once('data', (d: Buffer) => {
        const size = JSON.parse(d.toString()) as { Width: number; Height: number };
        stdout?.write(Buffer.from(`${size.Height} ${size.Width}\n`));
        finish(0);
      });
      return;
    }
    if (command[0] === 'echo') {
      stdout?.write(Buffer.from(command.slice(1).join(' ') + '\n'));
      return finish(0);
    }
    const exit = command[0] === 'sh' && command[1] === '-c' ? /^exit (\d+)$/.exec(command[2] ?? '') : null;
    if (exit) return finish(Number(exit[1]));
    streams.get('stderr')?.write(Buffer.from(`${command[0]}: not found\n`));
    finish(127);
  };
}

function servePortForward(socket: Duplex, head: Buffer): void {
  new SpdyConnection(socket, 'server', {
    head,
    onStream: (stream) => {
      stream.reply();
      if (stream.header('streamtype') !== 'data') return;
      const target = net.connect({ host: '127.0.0.1', port: Number(stream.header('port')) });
      target.on('data', (d: Buffer) => stream.write(d));
      target.on('end', () => stream.end());
      target.on('error', () => stream.reset());
      stream.on('data', (d: Buffer) => target.write(d));
      stream.once('end', () => target.end());
      stream.once('reset', () => target.destroy());
    },
  });
}

/** a kubelet's API on 127.0.0.1 (a free port), with its own CA and a client certificate for kapi */
export async function startKubeletStandin(): Promise<KubeletStandin> {
  const caKey = await generateKey('ecdsa');
  const ca = await createCA('kubelet-standin-ca', 1, caKey);
  const serverKey = await generateKey('ecdsa');
  const serverCert = await issueCert(
    ca,
    { commonName: 'kubelet', sans: ['127.0.0.1', 'localhost'], usage: 'server', validDays: 1 },
    serverKey,
  );
  const clientKey = await generateKey('ecdsa');
  const clientCert = await issueCert(
    ca,
    { commonName: 'kube-apiserver-kubelet-client', organizations: ['kubeadm:cluster-admins'], usage: 'client', validDays: 1 },
    clientKey,
  );
  const logs = new Map<string, string[]>();
  const seen: string[] = [];
  const port = await freePort();
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    seen.push(req.url ?? '');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (m) {
      const lines = logs.get(`${m[1]}/${m[2]}/${m[3]}`);
      if (!lines) {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end(`container "${m[3]}" in pod "${m[2]}" not found`);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write(logLines(lines, url.searchParams));
      if (url.searchParams.get('follow') !== 'true') return void res.end();
      // a followed container writes two more lines, then exits
      let n = 0;
      const timer = setInterval(() => {
        n++;
        res.write(`followed line ${n}\n`);
        if (n === 2) {
          clearInterval(timer);
          res.end();
        }
      }, 300);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end(`kubelet ${req.method} ${url.pathname}${url.search}\n`);
  };
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    seen.push(req.url ?? '');
    socket.on('error', () => {});
    const kind = url.pathname.split('/')[1];
    if ((kind === 'exec' || kind === 'attach') && String(req.headers.upgrade).toLowerCase() === 'spdy/3.1') {
      const protocol = chooseProtocol(req, REMOTE_COMMAND_PROTOCOLS);
      if (!protocol) return refuse(socket, 400, 'no supported stream protocol');
      upgradeTo(socket, protocol);
      serveRemoteCommand(socket, head, url.searchParams, kind);
      return;
    }
    if (kind === 'portForward' && String(req.headers.upgrade).toLowerCase() === 'spdy/3.1') {
      const protocol = chooseProtocol(req, ['portforward.k8s.io']);
      if (!protocol) return refuse(socket, 400, 'no supported stream protocol');
      upgradeTo(socket, protocol);
      servePortForward(socket, head);
      return;
    }
    refuse(socket, 400, `unsupported upgrade to ${String(req.headers.upgrade)}`);
  };
  const listen = async (address: string, at: number): Promise<https.Server> => {
    const server = https.createServer(
      { cert: serverCert, key: serverKey.privateKeyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true },
      onRequest,
    );
    server.on('upgrade', onUpgrade);
    await new Promise<void>((resolve) => server.listen(at, address, resolve));
    return server;
  };
  const servers = [await listen('127.0.0.1', port)];
  return {
    port,
    caPem: ca.certPem,
    clientCertPem: clientCert,
    clientKeyPem: clientKey.privateKeyPem,
    logs,
    seen,
    close: async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}

/** a Node whose kubelet is at `address`:`port` */
export async function registerNode(kapi: { http: KubeHttpClient }, name: string, address: string, port: number): Promise<void> {
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } };
  const created = await kapi.http.post('/api/v1/nodes', node);
  assert.equal(created.status, 201, created.body);
  const status = { status: { addresses: [{ type: 'InternalIP', address }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } };
  const patched = await kapi.http.patch(`/api/v1/nodes/${name}/status`, status);
  assert.equal(patched.status, 200, patched.body);
}

/** a Pod with these containers, bound to `node` (when given) and reported Running there */
export async function createRunningPod(
  kapi: { http: KubeHttpClient },
  ns: string,
  name: string,
  node: string | undefined,
  containers: string[],
  podIP?: string,
  containerPort?: number,
): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      ...(node ? { nodeName: node } : {}),
      containers: containers.map((c) => ({ name: c, image: 'busybox', ...(containerPort ? { ports: [{ containerPort }] } : {}) })),
    },
  };
  const created = await kapi.http.post(`/api/v1/namespaces/${ns}/pods`, pod);
  assert.equal(created.status, 201, created.body);
  if (!node) return;
  const status = {
    status: {
      phase: 'Running',
      ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
      containerStatuses: containers.map((c) => ({
        name: c,
        ready: true,
        restartCount: 0,
        image: 'busybox',
        imageID: '',
        state: { running: { startedAt: '2025-01-01T00:00:00Z' } },
      })),
    },
  };
  const patched = await kapi.http.patch(`/api/v1/namespaces/${ns}/pods/${name}/status`, status);
  assert.equal(patched.status, 200, patched.body);
}
