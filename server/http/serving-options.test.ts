// The serving flags from the command line: kube-apiserver's start-up errors for bad values,
// and what the server is given for good ones.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError, parseKapiFlags, type KapiConfig } from '../config/flags.js';
import { DEFAULT_HTTP2_MAX_STREAMS, servingTlsOptions } from './serving-options.js';

function config(args: string[]): KapiConfig {
  const out = parseKapiFlags(args, '/tmp');
  assert.equal(out.kind, 'config');
  return (out as { config: KapiConfig }).config;
}

function refused(args: string[], message: RegExp): void {
  assert.throws(
    () => parseKapiFlags(args, '/tmp'),
    (err: unknown) => err instanceof FlagError && message.test(err.message),
  );
}

describe('serving flags at start-up', () => {
  it('refuses what kube-apiserver refuses, with its messages', () => {
    refused(['--goaway-chance=0.03'], /^--goaway-chance can not be less than 0 or greater than 0\.02$/);
    refused(['--request-timeout=-1s'], /^--request-timeout can not be negative value$/);
    refused(['--min-request-timeout=-1'], /^--min-request-timeout can not be negative value$/);
    refused(
      ['--shutdown-watch-termination-grace-period=-1s'],
      /^shutdown-watch-termination-grace-period, if provided, can not be a negative value$/,
    );
    refused(
      ['--cors-allowed-origins=example.com'],
      /^--cors-allowed-origins has an invalid regular expression: regular expression does not pin/,
    );
    refused(['--tls-min-version=VersionTLS14'], /^unknown tls version "VersionTLS14"$/);
    refused(['--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,BOGUS'], /^Cipher suite BOGUS not supported or doesn't exist$/);
    refused(['--tls-sni-cert-key=only-a-cert.crt'], /certificate and key/);
  });

  it('turns good values into the server options', () => {
    const values = config([
      '--tls-min-version=VersionTLS13',
      '--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
      '--http2-max-streams-per-connection=50',
      '--goaway-chance=0.001',
    ]).rawValues;
    assert.deepEqual(
      servingTlsOptions(values, (p) => p),
      {
        minVersion: 'TLSv1.3',
        ciphers: 'ECDHE-RSA-AES256-GCM-SHA384',
        sniCertificates: [],
        maxConcurrentStreams: 50,
      },
    );
    const defaults = servingTlsOptions(config([]).rawValues, (p) => p);
    assert.equal(defaults.minVersion, 'TLSv1.2');
    assert.equal(defaults.ciphers, undefined);
    assert.equal(defaults.maxConcurrentStreams, DEFAULT_HTTP2_MAX_STREAMS);
    assert.throws(
      () => servingTlsOptions(config(['--tls-sni-cert-key=/nonexistent/a.crt,/nonexistent/a.key']).rawValues, (p) => p),
      /^Error: failed to load SNI cert and key: /,
    );
  });
});
