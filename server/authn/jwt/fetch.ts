// GETs JSON over HTTPS with an optional CA bundle (node:https, since Node 20's fetch cannot take
// a CA without a dispatcher). Used for OIDC discovery documents and JWKS.

import https from 'node:https';

export interface FetchOptions {
  /** PEM CAs to trust instead of the system's */
  ca?: string;
  timeoutMs?: number;
  /** at most this many bytes */
  maxBytes?: number;
}

export function getJson(url: string, opts: FetchOptions = {}): Promise<unknown> {
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    const req = https.get(
      url,
      { ca: opts.ca || undefined, timeout: opts.timeoutMs ?? 10_000, headers: { Accept: 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            req.destroy(new Error(`${url}: response larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) {
            reject(new Error(`${res.statusCode} ${res.statusMessage ?? ''}: ${body.slice(0, 200)}`));
            return;
          }
          try {
            resolve(JSON.parse(body));
          } catch (err) {
            reject(new Error(`${url}: invalid JSON: ${(err as Error).message}`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
    req.on('error', reject);
  });
}
