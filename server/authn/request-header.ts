// The authenticating proxy (--requestheader-*): a front proxy that authenticated the user
// passes who it is in headers. The headers are trusted only from a client certificate that
// chains to --requestheader-client-ca-file and, when --requestheader-allowed-names is set,
// whose Common Name is listed. Without such a certificate this method stays silent.

import type { X509Certificate } from 'node:crypto';
import type { Authenticator } from './authenticator.js';
import { parseCertificates, verifyClientChain } from './x509.js';
import type { UserInfo } from '../machinery/user.js';
import { distinctHeaders } from '../request/headers.js';

export interface RequestHeaderOptions {
  /** PEM of the CAs that sign proxy client certificates */
  clientCA: string | Buffer;
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  uidHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
}

function trimHeaders(names: readonly string[]): string[] {
  return names.map((n) => {
    const t = n.trim();
    if (t === '') throw new Error(`empty header ${JSON.stringify(n)}`);
    return t.toLowerCase();
  });
}

function commonName(cert: X509Certificate): string {
  const subject = cert.toLegacyObject().subject as unknown as Record<string, string | string[] | undefined>;
  const cn = subject.CN;
  return Array.isArray(cn) ? (cn[0] ?? '') : (cn ?? '');
}

function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

export function createRequestHeaderAuthenticator(opts: RequestHeaderOptions): Authenticator {
  const trusted = parseCertificates(opts.clientCA);
  if (trusted.length === 0) throw new Error('--requestheader-client-ca-file holds no certificates');
  const usernameHeaders = trimHeaders(opts.usernameHeaders);
  const uidHeaders = trimHeaders(opts.uidHeaders);
  const groupHeaders = trimHeaders(opts.groupHeaders);
  const extraPrefixes = trimHeaders(opts.extraHeaderPrefixes);
  const allowed = new Set(opts.allowedNames);

  return async (req) => {
    const headers = distinctHeaders({ headers: req.headers, rawHeaders: req.rawHeaders });
    const first = (names: readonly string[]): string => {
      for (const n of names) {
        const v = (headers.get(n) ?? []).find((x) => x !== '');
        if (v) return v;
      }
      return '';
    };
    const username = first(usernameHeaders);
    if (username === '') return null;
    if (req.peerCertificates.length === 0) return null;
    if (!verifyClientChain(req.peerCertificates, trusted)) {
      throw new Error('request header authentication: client certificate not signed by the requestheader client CA');
    }
    if (allowed.size > 0 && !allowed.has(commonName(req.peerCertificates[0]!))) {
      throw new Error(`x509: subject with cn=${commonName(req.peerCertificates[0]!)} is not in the allowed list`);
    }
    const groups: string[] = [];
    for (const n of groupHeaders) for (const v of headers.get(n) ?? []) if (v !== '') groups.push(v);
    const extra: Record<string, string[]> = {};
    for (const prefix of extraPrefixes) {
      for (const [name, values] of headers) {
        if (!name.startsWith(prefix)) continue;
        const key = unescapeExtraKey(name.slice(prefix.length));
        (extra[key] ??= []).push(...values);
      }
    }
    const user: UserInfo = { username, groups };
    const uid = first(uidHeaders);
    if (uid) user.uid = uid;
    if (Object.keys(extra).length > 0) user.extra = extra;
    return user;
  };
}
