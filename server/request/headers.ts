// Request headers as sent: every value of a repeated header, in order.

import type { HttpRequest } from './types.js';

/** header values by lower-cased name, each repeat kept apart (node joins repeats with ", ") */
export function distinctHeaders(req: Pick<HttpRequest, 'headers'> & { rawHeaders?: readonly string[] }): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const raw = req.rawHeaders;
  if (raw && raw.length > 0) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const list = out.get(name) ?? [];
      list.push(raw[i + 1]!);
      out.set(name, list);
    }
    return out;
  }
  for (const [name, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    out.set(name.toLowerCase(), Array.isArray(v) ? [...v] : [v]);
  }
  return out;
}

/** the connection-specific fields a proxy never passes on (Go's reverse proxy's list) */
export const HOP_BY_HOP_HEADERS: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];
