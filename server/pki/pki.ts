// kapi's PKI in the cert dir (<data-dir>/pki unless --cert-dir): made once, then reused, so a
// restart keeps every certificate and kubeconfig valid. File names are kubeadm's.
//
//   ca.crt/ca.key                kapi's CA (10 years); the client CA unless --client-ca-file
//   apiserver.crt/apiserver.key  the serving certificate (unless --tls-cert-file)
//   admin.crt/admin.key          CN kubernetes-admin, O system:masters (for admin.kubeconfig)
//   sa.key/sa.pub                the ServiceAccount token key pair (RSA, for a later issue)
//
// Replicas may share one cert dir (a volume): a lock file serialises them, and a serving
// certificate that lacks a name one replica needs is re-issued with the union of the names,
// so every replica's names end up in it.

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import {
  canonicalSan,
  certSans,
  createCA,
  generateKey,
  isIssuedByAndFresh,
  issueCert,
  keyMatchesCert,
  loadKey,
  splitPemCerts,
  type Signer,
} from './x509.js';
import { createLogger } from '../log.js';

const log = createLogger('pki');

export const CA_VALID_DAYS = 3650;
export const LEAF_VALID_DAYS = 365;
/** leaf certificates closer than this to expiry are re-issued at start-up */
export const RENEW_MARGIN_DAYS = 30;
export const ADMIN_USER = 'kubernetes-admin';
export const ADMIN_GROUP = 'system:masters';

export interface PkiOptions {
  certDir: string;
  /** --tls-cert-file / --tls-private-key-file; both '' to generate */
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  /** --client-ca-file; '' means kapi's CA */
  clientCaFile: string;
  /** names the serving certificate must cover besides the fixed ones */
  advertiseAddress?: string;
  bindAddress?: string;
  kubernetesServiceIP: string;
  extraSans?: string[];
}

export interface PkiFiles {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPublicKey: string;
}

export interface Pki {
  certDir: string;
  files: PkiFiles;
  /** kapi's CA certificate */
  caCertPem: string;
  /** what the server presents */
  servingCertPem: string;
  servingKeyPem: string;
  /** what a client should trust to verify the serving certificate */
  servingCaPem: string;
  /** the CAs client certificates are verified against (--client-ca-file, or kapi's CA) */
  clientCaPem: string;
  /** the admin client certificate; undefined when the client CA is not kapi's (it would not be accepted) */
  admin?: { certPem: string; keyPem: string };
  serviceAccountKeyPem: string;
  serviceAccountPublicKeyPem: string;
}

/** The names every generated serving certificate covers. */
export function requiredServingSans(opts: PkiOptions): string[] {
  const names = [
    'localhost',
    '127.0.0.1',
    '::1',
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    'kubernetes.default.svc.cluster.local',
    opts.kubernetesServiceIP,
    ...(opts.extraSans ?? []),
  ];
  if (opts.advertiseAddress) names.push(opts.advertiseAddress);
  const bind = opts.bindAddress;
  if (bind && bind !== '0.0.0.0' && bind !== '::') names.push(bind);
  return dedupe(names);
}

function dedupe(names: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const n of names) {
    const c = canonicalSan(n);
    if (!seen.has(c)) {
      seen.add(c);
      out.push(c);
    }
  }
  return out;
}

function readIfExists(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** Writes via a temporary file and rename, so a reader never sees half a key. */
function writeAtomic(file: string, content: string, mode: number): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, content, { mode });
  renameSync(tmp, file);
}

const LOCK_STALE_MS = 60_000;
const LOCK_WAIT_MS = 120_000;

/** An exclusive lock file in the cert dir; works across processes and containers sharing a volume. */
async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dir, '.kapi-pki.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, `${process.pid}@${os.hostname()}\n`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // a holder that died leaves its lock behind; PIDs do not cross containers, age does
      let age = 0;
      try {
        age = Date.now() - statSync(lock).mtimeMs;
      } catch {
        continue;
      }
      if (age > LOCK_STALE_MS) {
        log.warn('removing a stale PKI lock', { file: lock, ageSeconds: Math.round(age / 1000) });
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the PKI lock ${lock}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

async function ensureCA(files: PkiFiles): Promise<Signer | undefined> {
  const certPem = readIfExists(files.caCert);
  const keyPem = readIfExists(files.caKey);
  if (certPem && keyPem) return { certPem, key: await loadKey(keyPem) };
  if (certPem && !keyPem) {
    // a CA certificate supplied without its key: we can use what it signed, not sign more
    log.warn('ca.crt has no ca.key beside it; kapi cannot issue certificates', { file: files.caCert });
    return undefined;
  }
  const key = await generateKey('ecdsa');
  const ca = await createCA('kapi-ca', CA_VALID_DAYS, key);
  writeAtomic(files.caKey, key.privateKeyPem, 0o600);
  writeAtomic(files.caCert, ca.certPem, 0o644);
  log.info('created CA', { cert: files.caCert });
  return ca;
}

/** Reuses a leaf pair when it is fresh, signed by the CA and passes `accept`; otherwise issues a new one. */
async function ensureLeaf(
  ca: Signer | undefined,
  certFile: string,
  keyFile: string,
  what: string,
  issue: (ca: Signer, existingCertPem: string | undefined) => Promise<{ certPem: string; keyPem: string }>,
  accept: (certPem: string) => boolean,
): Promise<{ certPem: string; keyPem: string }> {
  const certPem = readIfExists(certFile);
  const keyPem = readIfExists(keyFile);
  let why = 'missing';
  if (certPem && keyPem) {
    if (!ca) return { certPem, keyPem };
    if (!keyMatchesCert(keyPem, certPem)) why = 'key does not match';
    else if (!isIssuedByAndFresh(certPem, ca.certPem, RENEW_MARGIN_DAYS)) why = 'not signed by the CA or about to expire';
    else if (!accept(certPem)) why = 'lacks a required name';
    else return { certPem, keyPem };
  }
  if (!ca) throw new Error(`cannot issue the ${what} certificate (${certFile}): no CA key in the cert dir`);
  const issued = await issue(ca, certPem);
  writeAtomic(keyFile, issued.keyPem, 0o600);
  writeAtomic(certFile, issued.certPem, 0o644);
  log.info(`issued ${what} certificate`, { cert: certFile, reason: why });
  return issued;
}

/** Creates what is missing in the cert dir, reuses what is there, and returns it all. */
export async function ensurePki(opts: PkiOptions): Promise<Pki> {
  const dir = opts.certDir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files: PkiFiles = {
    caCert: path.join(dir, 'ca.crt'),
    caKey: path.join(dir, 'ca.key'),
    servingCert: path.join(dir, 'apiserver.crt'),
    servingKey: path.join(dir, 'apiserver.key'),
    adminCert: path.join(dir, 'admin.crt'),
    adminKey: path.join(dir, 'admin.key'),
    serviceAccountKey: path.join(dir, 'sa.key'),
    serviceAccountPublicKey: path.join(dir, 'sa.pub'),
  };
  const userServing = opts.tlsCertFile !== '';

  return withLock(dir, async () => {
    const ca = await ensureCA(files);
    const caCertPem = readFileSync(files.caCert, 'utf8');

    let servingCertPem: string;
    let servingKeyPem: string;
    let servingCaPem: string;
    if (userServing) {
      servingCertPem = readFileSync(opts.tlsCertFile, 'utf8');
      servingKeyPem = readFileSync(opts.tlsPrivateKeyFile, 'utf8');
      if (!keyMatchesCert(servingKeyPem, servingCertPem)) {
        throw new Error(`--tls-private-key-file ${opts.tlsPrivateKeyFile} does not match --tls-cert-file ${opts.tlsCertFile}`);
      }
      // the file may carry its chain after the leaf; its last certificate is the best anchor we have
      const chain = splitPemCerts(servingCertPem);
      servingCaPem = chain[chain.length - 1] ?? servingCertPem;
      if (chain.length > 0 && isIssuedByAndFresh(chain[0]!, caCertPem, 0)) servingCaPem = caCertPem;
    } else {
      const wanted = requiredServingSans(opts);
      const serving = await ensureLeaf(
        ca,
        files.servingCert,
        files.servingKey,
        'serving',
        async (signer, existing) => {
          // keep names another replica sharing this dir asked for
          const keep = existing && isIssuedByAndFresh(existing, signer.certPem, 0) ? certSans(existing) : [];
          const key = await generateKey('ecdsa');
          const certPem = await issueCert(
            signer,
            { commonName: 'kube-apiserver', sans: dedupe([...wanted, ...keep]), usage: 'server', validDays: LEAF_VALID_DAYS },
            key,
          );
          return { certPem, keyPem: key.privateKeyPem };
        },
        (certPem) => {
          const have = new Set(certSans(certPem));
          return wanted.every((n) => have.has(n));
        },
      );
      servingCertPem = serving.certPem;
      servingKeyPem = serving.keyPem;
      servingCaPem = caCertPem;
    }

    const clientCaPem = opts.clientCaFile ? readFileSync(opts.clientCaFile, 'utf8') : caCertPem;
    const kapiCaTrusted = splitPemCerts(clientCaPem).some((c) => c.trim() === caCertPem.trim());
    let admin: Pki['admin'];
    if (kapiCaTrusted) {
      admin = await ensureLeaf(
        ca,
        files.adminCert,
        files.adminKey,
        'admin client',
        async (signer) => {
          const key = await generateKey('ecdsa');
          const certPem = await issueCert(
            signer,
            { commonName: ADMIN_USER, organizations: [ADMIN_GROUP], usage: 'client', validDays: LEAF_VALID_DAYS },
            key,
          );
          return { certPem, keyPem: key.privateKeyPem };
        },
        () => true,
      ).then((p) => ({ certPem: p.certPem, keyPem: p.keyPem }));
    } else {
      log.info("--client-ca-file does not include kapi's CA: no admin client certificate", { clientCaFile: opts.clientCaFile });
    }

    let saKey = readIfExists(files.serviceAccountKey);
    let saPub = readIfExists(files.serviceAccountPublicKey);
    if (saKey && !saPub) {
      saPub = createPublicKey(saKey).export({ type: 'spki', format: 'pem' }) as string;
      writeAtomic(files.serviceAccountPublicKey, saPub, 0o644);
    }
    if (!saKey || !saPub) {
      const key = await generateKey('rsa');
      writeAtomic(files.serviceAccountKey, key.privateKeyPem, 0o600);
      writeAtomic(files.serviceAccountPublicKey, key.publicKeyPem, 0o644);
      saKey = key.privateKeyPem;
      saPub = key.publicKeyPem;
      log.info('created service account key pair', { key: files.serviceAccountKey });
    }

    return {
      certDir: dir,
      files,
      caCertPem,
      servingCertPem,
      servingKeyPem,
      servingCaPem,
      clientCaPem,
      admin,
      serviceAccountKeyPem: saKey,
      serviceAccountPublicKeyPem: saPub,
    };
  });
}
