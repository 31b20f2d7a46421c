// The secure-serving flags (--tls-min-version, --tls-cipher-suites, --tls-sni-cert-key,
// --http2-max-streams-per-connection) turned into the listening server's options. Bad values
// end start-up (parse time already checked names; here files are read).

import { readFileSync } from 'node:fs';
import { getCiphers } from 'node:tls';
import type { FlagValue } from '../machinery/flagset.js';
import type { SecureServerOptions, SniCertificate } from './server.js';
import { certificateNames, parseNamedCertKey, tlsCipherSuites, tlsMinVersion } from './tls-options.js';

/** kapi's HTTP/2 stream limit when the flag is 0 (client-go multiplexes every watch over one connection) */
export const DEFAULT_HTTP2_MAX_STREAMS = 1000;

export type ServingTlsOptions = Pick<SecureServerOptions, 'minVersion' | 'ciphers' | 'sniCertificates' | 'maxConcurrentStreams'>;

export function servingTlsOptions(values: ReadonlyMap<string, FlagValue>, resolvePath: (p: string) => string): ServingTlsOptions {
  const suites = tlsCipherSuites((values.get('tls-cipher-suites') as string[] | undefined) ?? [], getCiphers());
  let minVersion = tlsMinVersion((values.get('tls-min-version') as string | undefined) ?? '');
  // only TLS 1.3 suites named: nothing is left for older versions
  if (suites.tls13Only) minVersion = 'TLSv1.3';
  const sniCertificates: SniCertificate[] = ((values.get('tls-sni-cert-key') as string[] | undefined) ?? []).map((flag) => {
    const named = parseNamedCertKey(flag);
    let cert: Buffer;
    let key: Buffer;
    try {
      cert = readFileSync(resolvePath(named.certFile));
      key = readFileSync(resolvePath(named.keyFile));
    } catch (err) {
      throw new Error(`failed to load SNI cert and key: ${(err as Error).message}`);
    }
    const explicit = named.names.length > 0;
    return { cert, key, names: explicit ? named.names : certificateNames(cert), explicit };
  });
  const streams = (values.get('http2-max-streams-per-connection') as number | undefined) ?? 0;
  return {
    minVersion,
    ciphers: suites.ciphers,
    sniCertificates,
    maxConcurrentStreams: streams > 0 ? streams : DEFAULT_HTTP2_MAX_STREAMS,
  };
}
