// A loopback HTTPS server with its own CA, for webhooks kapi calls in e2e tests: JSON in,
// JSON out (an answer may also be a promise, for a webhook that holds a request). `caBundle`
// is the CA as a webhook clientConfig wants it (base64 PEM).

import https from 'node:https';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { freePort } from './harness.js';

export interface LoopbackHttps {
  port: number;
  url: string;
  caBundle: string;
  close(): Promise<void>;
}

/** `answer(path, body)` returns the JSON to send back (status 200), or a promise of it */
export async function startLoopbackHttps(answer: (path: string, body: unknown) => unknown): Promise<LoopbackHttps> {
  const caKey = await generateKey('ecdsa');
  const ca = await createCA('loopback-webhook-ca', 1, caKey);
  const serverKey = await generateKey('ecdsa');
  const serverCert = await issueCert(ca, { commonName: '127.0.0.1', sans: ['127.0.0.1'], usage: 'server', validDays: 1 }, serverKey);
  const port = await freePort();
  const server = https.createServer({ cert: serverCert, key: serverKey.privateKeyPem }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      Promise.resolve()
        .then(() => answer(path, JSON.parse(body)))
        .then(
          (out) => {
            res.setHeader('Content-Type', 'application/json');
            res.end(JSON.stringify(out));
          },
          (err: unknown) => {
            res.statusCode = 500;
            res.end(String((err as Error).message));
          },
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
