// Resolves the caller. Invalid credentials are 401; no credentials are 401 too unless
// anonymous access is enabled (for all paths, or for the listed ones only).

import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { anonymousUser, type AuthenticationRequest, type Authenticator } from '../../authn/authenticator.js';
import { SPACE_BEFORE_TOKEN_WARNING, spaceBeforeBearerToken } from '../../authn/bearer.js';
import { errors } from '../../machinery/status.js';
import { writeStatusError } from '../../request/response.js';
import type { Filter, HttpRequest } from '../../request/types.js';

export type { AnonymousOptions } from '../../authn/authenticator.js';
import type { AnonymousOptions } from '../../authn/authenticator.js';
import { addWarning } from '../../machinery/warnings.js';

export interface AuthenticationOptions {
  authenticator: Authenticator;
  anonymous?: AnonymousOptions;
  /** logs why credentials were rejected (never sent to the client) */
  onFailure?: (err: unknown) => void;
}

interface PeerChain {
  certificates: X509Certificate[];
  verified: boolean;
}

// a connection's certificate never changes: parse it once per TLS socket
const peerChains = new WeakMap<object, PeerChain>();

function tlsSocketOf(req: HttpRequest): TLSSocket | undefined {
  const h2 = req as unknown as { stream?: { session?: { socket?: unknown } } };
  const candidate = h2.stream?.session?.socket ?? req.socket;
  if (candidate && typeof (candidate as TLSSocket).getPeerCertificate === 'function') return candidate as TLSSocket;
  return undefined;
}

export function peerChain(req: HttpRequest): PeerChain {
  const socket = tlsSocketOf(req);
  if (!socket) return { certificates: [], verified: false };
  const cached = peerChains.get(socket);
  if (cached) return cached;
  const certificates: X509Certificate[] = [];
  let detailed = socket.getPeerCertificate(true);
  const seen = new Set<string>();
  while (detailed && detailed.raw && !seen.has(detailed.fingerprint256)) {
    seen.add(detailed.fingerprint256);
    certificates.push(new X509Certificate(detailed.raw));
    detailed = detailed.issuerCertificate;
  }
  const chain = { certificates, verified: socket.authorized === true };
  peerChains.set(socket, chain);
  return chain;
}

/** an exact path, or a prefix when the pattern ends in `*` (as RBAC's nonResourceURLs) */
function pathMatches(pattern: string, path: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : pattern === path;
}

export function withAuthentication(opts: AuthenticationOptions): Filter {
  return (next) => async (state) => {
    const chain = peerChain(state.req);
    const request: AuthenticationRequest = {
      headers: state.req.headers,
      rawHeaders: (state.req as { rawHeaders?: readonly string[] }).rawHeaders,
      path: state.path,
      peerCertificates: chain.certificates,
      peerVerified: chain.verified,
    };
    let user;
    try {
      user = await opts.authenticator(request);
    } catch (err) {
      opts.onFailure?.(err);
      await writeStatusError(state, errors.unauthorized());
      return;
    }
    if (!user) {
      if (spaceBeforeBearerToken(state.req.headers.authorization)) addWarning(state.warnings, SPACE_BEFORE_TOKEN_WARNING);
      const anon = opts.anonymous;
      const allowed = anon?.enabled === true && (anon.paths === undefined || anon.paths.some((p) => pathMatches(p, state.path)));
      if (!allowed) {
        await writeStatusError(state, errors.unauthorized());
        return;
      }
      user = anonymousUser();
    }
    state.user = user;
    await next(state);
  };
}
