// Throwaway certificates for tests: a CA, a server certificate for 127.0.0.1 and client
// certificates, made with the openssl command line in a temporary directory.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  cert: string;
  key: string;
}

export interface TestPKI {
  ca: KeyPair;
  server: KeyPair;
  /** a client certificate signed by the CA */
  client(commonName: string, organizations?: string[]): KeyPair;
  /** a client certificate from a CA nobody trusts */
  stranger(commonName: string): KeyPair;
  cleanup(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

function newKeyArgs(keyFile: string): string[] {
  return ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile];
}

function selfSigned(dir: string, name: string, subject: string): KeyPair {
  openssl(['req', '-x509', ...newKeyArgs(`${name}.key`), '-out', `${name}.crt`, '-days', '2', '-subj', subject], dir);
  return { cert: readFileSync(join(dir, `${name}.crt`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

function signed(dir: string, ca: string, name: string, subject: string, extensions: string): KeyPair {
  openssl(['req', ...newKeyArgs(`${name}.key`), '-out', `${name}.csr`, '-subj', subject], dir);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    ],
    dir,
  );
  return { cert: readFileSync(join(dir, `${name}.crt`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

export function createTestPKI(): TestPKI {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-pki-'));
  const ca = selfSigned(dir, 'ca', '/CN=kapi-test-ca');
  selfSigned(dir, 'other-ca', '/CN=somebody-else');
  const server = signed(dir, 'ca', 'server', '/CN=kapi', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  let n = 0;
  return {
    ca,
    server,
    client(commonName, organizations = []) {
      const subject = organizations.map((o) => `/O=${o}`).join('') + `/CN=${commonName}`;
      return signed(dir, 'ca', `client-${n++}`, subject, 'extendedKeyUsage=clientAuth\n');
    },
    stranger(commonName) {
      return signed(dir, 'other-ca', `stranger-${n++}`, `/CN=${commonName}`, 'extendedKeyUsage=clientAuth\n');
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
