// The TLS flags: kube-apiserver's names and messages, and what a real server offers with them
// (TLS 1.2 refused under VersionTLS13, only the named TLS 1.2 suites, certificates by SNI).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, getCiphers, type TLSSocket } from 'node:tls';
import { writeRawJson } from '../request/response.js';
import { serveFilters, type FilterServer } from './testing/filter-server.js';
import { certificateNames, parseNamedCertKey, sniMatcher, tlsCipherSuites, tlsMinVersion } from './tls-options.js';

describe('tlsMinVersion', () => {
  it("maps Go's names; '' is TLS 1.2; anything else is kube's error", () => {
    assert.equal(tlsMinVersion(''), 'TLSv1.2');
    assert.equal(tlsMinVersion('VersionTLS10'), 'TLSv1');
    assert.equal(tlsMinVersion('VersionTLS11'), 'TLSv1.1');
    assert.equal(tlsMinVersion('VersionTLS12'), 'TLSv1.2');
    assert.equal(tlsMinVersion('VersionTLS13'), 'TLSv1.3');
    assert.throws(() => tlsMinVersion('TLS13'), { message: 'unknown tls version "TLS13"' });
  });
});

describe('tlsCipherSuites', () => {
  const all = getCiphers();
  it("maps Go's suite names to OpenSSL's and leaves TLS 1.3 suites alone", () => {
    assert.deepEqual(tlsCipherSuites([], all), { tls13Only: false });
    assert.deepEqual(
      tlsCipherSuites(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305', 'TLS_AES_128_GCM_SHA256'], all),
      {
        ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305',
        tls13Only: false,
      },
    );
    assert.deepEqual(tlsCipherSuites(['TLS_AES_256_GCM_SHA384'], all), { tls13Only: true });
  });
  it("refuses unknown names with kube-apiserver's message, and suites this OpenSSL lacks", () => {
    assert.throws(() => tlsCipherSuites(['TLS_NOPE'], all), { message: "Cipher suite TLS_NOPE not supported or doesn't exist" });
    assert.throws(
      () => tlsCipherSuites(['TLS_RSA_WITH_RC4_128_SHA'], ['aes128-sha']),
      /TLS_RSA_WITH_RC4_128_SHA \(OpenSSL RC4-SHA\) is not available/,
    );
  });
});

describe('parseNamedCertKey and sniMatcher', () => {
  it('reads "cert,key[:names]"', () => {
    assert.deepEqual(parseNamedCertKey('a.crt,a.key'), { certFile: 'a.crt', keyFile: 'a.key', names: [] });
    assert.deepEqual(parseNamedCertKey('a.crt,a.key:*.foo.com,foo.com'), {
      certFile: 'a.crt',
      keyFile: 'a.key',
      names: ['*.foo.com', 'foo.com'],
    });
    assert.throws(() => parseNamedCertKey('a.crt'), /certificate and key/);
  });
  it('exact names before wildcards, given names before certificate names, first flag first', () => {
    const pick = sniMatcher([
      { names: ['*.foo.com'], explicit: true, value: 'wild' },
      { names: ['a.foo.com', 'bar.com'], explicit: false, value: 'extracted' },
      { names: ['bar.com'], explicit: true, value: 'explicit-bar' },
      { names: ['bar.com'], explicit: true, value: 'later-bar' },
    ]);
    assert.equal(pick('A.foo.com'), 'extracted');
    assert.equal(pick('b.foo.com'), 'wild');
    assert.equal(pick('x.b.foo.com'), undefined);
    assert.equal(pick('bar.com'), 'explicit-bar');
    assert.equal(pick('other.org'), undefined);
  });
});

/** the TLS version and certificate a client gets, or the handshake's error */
function handshake(
  port: number,
  opts: { maxVersion?: 'TLSv1.2' | 'TLSv1.3'; servername?: string; ciphers?: string },
): Promise<{ version?: string; cipher?: string; subject?: string; error?: string }> {
  return new Promise((resolve) => {
    const socket: TLSSocket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'], ...opts }, () => {
      const cert = socket.getPeerCertificate();
      resolve({ version: socket.getProtocol() ?? undefined, cipher: socket.getCipher().name, subject: String(cert.subject?.CN) });
      socket.end();
    });
    socket.on('error', (err) => resolve({ error: err.message }));
  });
}

describe('the server with the TLS flags', () => {
  let dir: string;
  let strict: FilterServer;
  let picky: FilterServer;
  let sni: FilterServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-sni-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        'sni.key',
        '-out',
        'sni.crt',
        '-days',
        '2',
        '-subj',
        '/CN=sni.example',
        '-addext',
        'subjectAltName=DNS:sni.example,DNS:*.wild.example',
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    const api = async (state: Parameters<typeof writeRawJson>[0]) => writeRawJson(state, 200, {});
    strict = await serveFilters([], api, { minVersion: tlsMinVersion('VersionTLS13') });
    picky = await serveFilters([], api, { ciphers: tlsCipherSuites(['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'], getCiphers()).ciphers });
    const cert = readFileSync(join(dir, 'sni.crt'));
    sni = await serveFilters([], api, {
      sniCertificates: [{ cert, key: readFileSync(join(dir, 'sni.key')), names: certificateNames(cert), explicit: false }],
    });
  });
  after(async () => {
    await strict?.close();
    await picky?.close();
    await sni?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('VersionTLS13 refuses a TLS 1.2 client and serves a TLS 1.3 one', async () => {
    const old = await handshake(strict.client.port, { maxVersion: 'TLSv1.2' });
    assert.ok(old.error, 'TLS 1.2 handshake refused');
    assert.equal((await handshake(strict.client.port, {})).version, 'TLSv1.3');
  });

  it('only the named TLS 1.2 suite is offered', async () => {
    assert.equal((await handshake(picky.client.port, { maxVersion: 'TLSv1.2' })).cipher, 'ECDHE-ECDSA-AES256-GCM-SHA384');
    const other = await handshake(picky.client.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' });
    assert.ok(other.error, 'a client without that suite is refused');
  });

  it('the certificate follows the server name the client asks for', async () => {
    assert.deepEqual(certificateNames(readFileSync(join(dir, 'sni.crt'))), ['sni.example', '*.wild.example']);
    assert.equal((await handshake(sni.client.port, { servername: 'sni.example' })).subject, 'sni.example');
    assert.equal((await handshake(sni.client.port, { servername: 'a.wild.example' })).subject, 'sni.example');
    assert.equal((await handshake(sni.client.port, { servername: 'localhost' })).subject, 'kapi');
  });
});
