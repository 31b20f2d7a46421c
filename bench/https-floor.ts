// The floor under kapi's GET: node's own HTTPS server (HTTP/2 with HTTP/1.1 allowed, as kapi
// serves) answering one fixed 2.3 KB JSON body with kapi's response headers, driven by the
// bench's client exactly as `make bench` drives kapi. What it costs per request is what node,
// TLS and the kernel take before kapi does anything; kapi's GET minus this is kapi's own work.
//
//   node dist/bench/https-floor.js [--requests N] [--concurrency N]

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createSecureServer } from 'node:http2';
import { fileURLToPath } from 'node:url';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { TokenClient } from './client.js';
import { cpuMs, runConcurrent, throughput } from './measure.js';

const BODY = Buffer.from(
  JSON.stringify({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: 'cm-000001', namespace: 'bench', uid: randomUUID(), resourceVersion: '12345' },
    data: { payload: 'x'.repeat(2200) },
  }),
);

/** the server side, in a process of its own: prints its port, serves until killed */
function serve(cert: string, key: string): void {
  const server = createSecureServer(
    { allowHTTP1: true, noDelay: true, cert, key, requestCert: true, rejectUnauthorized: false },
    (_req, res) => {
      res.setHeader('Audit-Id', randomUUID());
      res.setHeader('Cache-Control', 'no-cache, private');
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('X-Kubernetes-Pf-Flowschema-Uid', 'exempt');
      res.setHeader('X-Kubernetes-Pf-Prioritylevel-Uid', 'exempt');
      res.setHeader('Content-Length', BODY.length);
      res.writeHead(200);
      res.end(BODY);
    },
  );
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
  });
}

function flag(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const n = Number(args[at + 1]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} needs a positive integer`);
  return n;
}

async function measure(args: string[]): Promise<void> {
  const requests = flag(args, '--requests', 100_000);
  const concurrency = flag(args, '--concurrency', 64);
  const ca = await createCA('https-floor-ca', 2, await generateKey('ecdsa'));
  const serverKey = await generateKey('ecdsa');
  const cert = await issueCert(ca, { commonName: '127.0.0.1', sans: ['127.0.0.1'], usage: 'server', validDays: 2 }, serverKey);
  // the server runs as kapi does (its young generation included), so its CPU compares
  const child = spawn(process.execPath, ['--max-semi-space-size=64', fileURLToPath(import.meta.url), 'serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(JSON.stringify({ cert, key: serverKey.privateKeyPem }));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
    });
    const client = new TokenClient(`https://127.0.0.1:${port}`, Buffer.from(ca.certPem), 'unused', concurrency);
    const get = () => client.expect(200, 'GET', '/api/v1/namespaces/bench/configmaps/cm-000001').then(() => {});
    await runConcurrent(Math.min(requests, 20_000), concurrency, get);
    const server0 = cpuMs(child.pid!);
    const client0 = process.cpuUsage();
    const run = await runConcurrent(requests, concurrency, get);
    const serverMs = cpuMs(child.pid!) - server0;
    const clientUse = process.cpuUsage(client0);
    client.close();
    const perOp = (ms: number) => (ms / requests).toFixed(4);
    console.log(
      `https floor: ${throughput(run).toFixed(0)} GETs/s, ${concurrency} concurrent; server CPU ${perOp(serverMs)} ms/op, ` +
        `client CPU ${perOp((clientUse.user + clientUse.system) / 1000)} ms/op`,
    );
  } finally {
    child.kill();
  }
}

if (process.argv[2] === 'serve') {
  let input = '';
  process.stdin.on('data', (d: Buffer) => (input += d.toString()));
  process.stdin.on('end', () => {
    const { cert, key } = JSON.parse(input) as { cert: string; key: string };
    serve(cert, key);
  });
} else {
  measure(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
