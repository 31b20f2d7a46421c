// X.509 client certificate authentication (`--client-ca-file`): the subject's Common Name is
// the user name and each Organization a group. The certificate must chain to one of this
// authenticator's CAs; the TLS server may trust more CAs (e.g. a front proxy's) than this.

import { X509Certificate } from 'node:crypto';
import { frozenUser, type UserInfo } from '../machinery/user.js';
import type { Authenticator } from './authenticator.js';

const CLIENT_AUTH_EKU = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

/** splits a PEM bundle into certificates */
export function parseCertificates(pem: string | Buffer): X509Certificate[] {
  const text = typeof pem === 'string' ? pem : pem.toString('utf8');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

function issuedBy(cert: X509Certificate, ca: X509Certificate): boolean {
  try {
    return cert.checkIssued(ca) && cert.verify(ca.publicKey);
  } catch {
    return false;
  }
}

function validNow(cert: X509Certificate, now: number): boolean {
  return Date.parse(cert.validFrom) <= now && now <= Date.parse(cert.validTo);
}

/** Go's x509 verification: no EKU extension means any use */
function allowsClientAuth(cert: X509Certificate): boolean {
  const eku = cert.keyUsage;
  if (!eku || eku.length === 0) return true;
  return eku.includes(CLIENT_AUTH_EKU) || eku.includes(ANY_EKU);
}

function subjectValues(cert: X509Certificate, key: 'CN' | 'O'): string[] {
  const subject = cert.toLegacyObject().subject as unknown as Record<string, string | string[] | undefined>;
  const v = subject[key];
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** Verifies the chain (leaf first) against the trusted CAs: the leaf must be valid now, allow
 *  client authentication and reach a trusted CA through valid intermediates. */
export function verifyClientChain(chain: readonly X509Certificate[], trusted: readonly X509Certificate[], now = Date.now()): boolean {
  if (chain.length === 0) return false;
  const leaf = chain[0];
  if (!validNow(leaf, now) || !allowsClientAuth(leaf)) return false;
  let current = leaf;
  for (let depth = 0; depth < 8; depth++) {
    if (trusted.some((ca) => validNow(ca, now) && issuedBy(current, ca))) return true;
    const next = chain.slice(1).find((c) => c !== current && c.ca && validNow(c, now) && issuedBy(current, c));
    if (!next) return false;
    current = next;
  }
  return false;
}

export function userFromCertificate(cert: X509Certificate): UserInfo | null {
  const cn = subjectValues(cert, 'CN')[0] ?? '';
  if (cn === '') return null;
  return { username: cn, groups: subjectValues(cert, 'O') };
}

/** the span of time in which every one of `certs` is valid (from > to when there is none) */
function commonValidity(certs: readonly X509Certificate[]): { from: number; to: number } {
  let from = -Infinity;
  let to = Infinity;
  for (const c of certs) {
    from = Math.max(from, Date.parse(c.validFrom));
    to = Math.min(to, Date.parse(c.validTo));
  }
  return { from, to };
}

interface VerifiedChain {
  from: number;
  to: number;
  user: UserInfo | null;
}

export function createX509Authenticator(clientCA: string | Buffer | readonly X509Certificate[]): Authenticator {
  const trusted = Array.isArray(clientCA) ? [...clientCA] : parseCertificates(clientCA as string | Buffer);
  // Every request on one connection presents the same parsed chain (the same array, see
  // filters/authentication), and verifying it costs signature checks. Its verdict depends on
  // the clock only through the certificates' validity, so a chain verified while all of them
  // (its own and the trusted CAs) were valid stays verified for as long as they all are.
  const verified = new WeakMap<readonly X509Certificate[], VerifiedChain>();
  return async (req) => {
    const chain = req.peerCertificates;
    if (chain.length === 0) return null;
    const now = Date.now();
    const known = verified.get(chain);
    // the connection's user, shared and frozen: later stages remember their work by it
    if (known && known.from <= now && now <= known.to) return known.user;
    if (!verifyClientChain(chain, trusted, now)) {
      throw new Error('x509: certificate signed by unknown authority');
    }
    // a certificate without a common name names nobody: other methods may still apply
    const user = userFromCertificate(chain[0]);
    const span = commonValidity([...chain, ...trusted]);
    const shared = user && frozenUser(user);
    if (span.from <= now && now <= span.to) verified.set(chain, { ...span, user: shared });
    return shared;
  };
}
