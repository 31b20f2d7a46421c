// The TLS flags of kube-apiserver in node's terms: --tls-min-version (Go's VersionTLS1x names),
// --tls-cipher-suites (Go's IANA-style names, mapped to OpenSSL's) and --tls-sni-cert-key
// (certificate/key pairs picked by the name the client asks for).

import { X509Certificate } from 'node:crypto';

export type NodeTlsVersion = 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';

const VERSIONS: Record<string, NodeTlsVersion> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** --tls-min-version; '' is kube-apiserver's default, TLS 1.2. Throws with kube's message. */
export function tlsMinVersion(name: string): NodeTlsVersion {
  if (name === '') return 'TLSv1.2';
  const v = VERSIONS[name];
  if (!v) throw new Error(`unknown tls version ${JSON.stringify(name)}`);
  return v;
}

// TLS 1.3's suites are not configurable in Go (all are always on), so they are accepted and
// left alone here too
const TLS13_SUITES = new Set(['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']);

/** Go's secure and insecure suite names (what kube-apiserver accepts) -> OpenSSL's */
const SUITES: Record<string, string> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  // kube-apiserver's legacy aliases
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  // insecure, but accepted by kube-apiserver
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
};

export interface CipherChoice {
  /** OpenSSL cipher list for TLS 1.2 and older; undefined: node's defaults */
  ciphers?: string;
  /** only TLS 1.3 suites were named: TLS 1.2 has nothing to offer */
  tls13Only: boolean;
}

/**
 * --tls-cipher-suites. Throws with kube-apiserver's message for a name it does not know, and
 * for one that this node's OpenSSL cannot offer (e.g. RC4), which kapi cannot honour.
 */
export function tlsCipherSuites(names: readonly string[], available: readonly string[]): CipherChoice {
  const list = names.map((n) => n.trim()).filter((n) => n !== '');
  if (list.length === 0) return { tls13Only: false };
  const have = new Set(available.map((c) => c.toUpperCase()));
  const openssl: string[] = [];
  for (const name of list) {
    if (TLS13_SUITES.has(name)) continue;
    const mapped = SUITES[name];
    if (!mapped) throw new Error(`Cipher suite ${name} not supported or doesn't exist`);
    if (!have.has(mapped)) throw new Error(`Cipher suite ${name} (OpenSSL ${mapped}) is not available in this build of node`);
    if (!openssl.includes(mapped)) openssl.push(mapped);
  }
  if (openssl.length === 0) return { tls13Only: true };
  return { ciphers: openssl.join(':'), tls13Only: false };
}

export interface NamedCertKeyFlag {
  certFile: string;
  keyFile: string;
  /** explicit domain patterns; empty: the certificate's own names */
  names: string[];
}

/** one --tls-sni-cert-key value: "cert,key" or "cert,key:name1,name2" (kube's NamedCertKey) */
export function parseNamedCertKey(value: string): NamedCertKeyFlag {
  const colon = value.indexOf(':');
  const files = (colon < 0 ? value : value.slice(0, colon)).split(',').map((s) => s.trim());
  const names =
    colon < 0
      ? []
      : value
          .slice(colon + 1)
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  if (files.length !== 2 || files[0] === '' || files[1] === '') {
    throw new Error('expected comma separated certificate and key file paths');
  }
  return { certFile: files[0]!, keyFile: files[1]!, names };
}

/** DNS names and IPs a certificate is for: its SANs, and its CommonName */
export function certificateNames(certPem: string | Buffer): string[] {
  const cert = new X509Certificate(certPem);
  const names: string[] = [];
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject)?.[1];
  if (cn) names.push(cn);
  for (const entry of (cert.subjectAltName ?? '').split(',')) {
    const m = /^\s*(DNS|IP Address):(.+)$/.exec(entry);
    if (m) names.push(m[2]!.trim());
  }
  return [...new Set(names)];
}

/**
 * Picks the certificate for the server name a client sent: explicit patterns before names
 * taken from certificates, exact names before wildcards (one label), earlier flags first;
 * undefined: the default serving certificate.
 */
export function sniMatcher<T>(
  entries: readonly { names: readonly string[]; explicit: boolean; value: T }[],
): (serverName: string) => T | undefined {
  const exact = new Map<string, T>();
  // explicit names are entered first, so extracted names never shadow them
  for (const explicit of [true, false]) {
    for (const e of entries) {
      if (e.explicit !== explicit) continue;
      for (const n of e.names) {
        const key = n.toLowerCase();
        if (!exact.has(key)) exact.set(key, e.value);
      }
    }
  }
  return (serverName) => {
    const name = serverName.toLowerCase();
    const hit = exact.get(name);
    if (hit !== undefined) return hit;
    const dot = name.indexOf('.');
    if (dot < 0) return undefined;
    return exact.get('*' + name.slice(dot));
  };
}
