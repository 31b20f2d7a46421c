// Certificate and key creation: node's WebCrypto makes and holds the keys, @peculiar/x509
// builds the certificates (node:crypto can read certificates but not make them). Reading
// and checking existing certificates uses node's own X509Certificate.

// tsyringe (used by @peculiar/x509) needs the Reflect metadata API before it loads
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, createPublicKey, randomBytes, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import net from 'node:net';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 } as const;

export type KeyKind = 'ecdsa' | 'rsa';

/** A private key in the two forms we need: WebCrypto (to sign) and PEM (to store). */
export interface KeyMaterial {
  keys: CryptoKeyPair;
  /** SEC1 ("EC PRIVATE KEY") or PKCS#1 ("RSA PRIVATE KEY"): what kubeadm writes */
  privateKeyPem: string;
  /** SPKI ("PUBLIC KEY") */
  publicKeyPem: string;
}

/** A certificate with the key that signs under it (a CA). */
export interface Signer {
  certPem: string;
  key: KeyMaterial;
}

export type CertUsage = 'ca' | 'server' | 'client';

export interface CertRequest {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses; sorted into the right SAN types */
  sans?: string[];
  usage: CertUsage;
  validDays: number;
}

function pemFromKeyObject(key: KeyObject): { privateKeyPem: string; publicKeyPem: string } {
  const type = key.asymmetricKeyType === 'ec' ? 'sec1' : 'pkcs1';
  return {
    privateKeyPem: key.export({ type, format: 'pem' }) as string,
    publicKeyPem: createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string,
  };
}

export async function generateKey(kind: KeyKind): Promise<KeyMaterial> {
  const alg = kind === 'ecdsa' ? ECDSA : RSA;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyObject = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  return { keys, ...pemFromKeyObject(keyObject) };
}

/** Loads a PEM private key of any usual form (SEC1, PKCS#1, PKCS#8) for signing. */
export async function loadKey(pem: string): Promise<KeyMaterial> {
  const keyObject = createPrivateKey(pem);
  const pkcs8 = keyObject.export({ type: 'pkcs8', format: 'der' });
  const spki = createPublicKey(keyObject).export({ type: 'spki', format: 'der' });
  let alg: typeof ECDSA | { name: string; hash: string };
  if (keyObject.asymmetricKeyType === 'ec') {
    const curve = keyObject.asymmetricKeyDetails?.namedCurve;
    if (curve !== 'prime256v1') throw new Error(`unsupported EC curve ${curve} (kapi uses P-256)`);
    alg = ECDSA;
  } else if (keyObject.asymmetricKeyType === 'rsa') {
    alg = { name: RSA.name, hash: RSA.hash };
  } else {
    throw new Error(`unsupported key type ${keyObject.asymmetricKeyType}`);
  }
  const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, alg, true, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', spki, alg, true, ['verify']);
  return { keys: { privateKey, publicKey }, ...pemFromKeyObject(keyObject) };
}

function signingAlgorithm(key: CryptoKey): typeof ECDSA | { name: string; hash: string } {
  return key.algorithm.name === 'ECDSA' ? ECDSA : { name: RSA.name, hash: RSA.hash };
}

function serialNumber(): string {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f; // positive, as RFC 5280 requires
  return b.toString('hex');
}

/** Escapes a value for the DN text form @peculiar/x509 parses. */
function dnValue(v: string): string {
  return /[,+="\\<>;#]/.test(v) || v.trim() !== v ? JSON.stringify(v) : v;
}

function subjectOf(req: CertRequest): string {
  const parts = (req.organizations ?? []).map((o) => `O=${dnValue(o)}`);
  parts.push(`CN=${dnValue(req.commonName)}`);
  return parts.join(', ');
}

function sanExtension(sans: string[]): x509.SubjectAlternativeNameExtension {
  const names: x509.JsonGeneralNames = sans.map((s) => (net.isIP(s) ? { type: 'ip', value: s } : { type: 'dns', value: s }));
  return new x509.SubjectAlternativeNameExtension(names, false);
}

function validity(days: number): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  // a little back-dating tolerates clock skew between replicas and clients
  return { notBefore: new Date(now - 5 * 60_000), notAfter: new Date(now + days * 86_400_000) };
}

/** Creates a self-signed CA. */
export async function createCA(commonName: string, validDays: number, key: KeyMaterial): Promise<Signer> {
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${dnValue(commonName)}`,
    ...validity(validDays),
    keys: key.keys,
    signingAlgorithm: signingAlgorithm(key.keys.privateKey),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(key.keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', key };
}

/** Issues a leaf certificate for `key` signed by `ca`. */
export async function issueCert(ca: Signer, req: CertRequest, key: KeyMaterial): Promise<string> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    // kubeadm's leaf usages; keyEncipherment matters only for RSA keys
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(
      [req.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
  ];
  if (req.sans && req.sans.length > 0) extensions.push(sanExtension(req.sans));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: subjectOf(req),
    issuer: caCert.subject,
    ...validity(req.validDays),
    publicKey: key.keys.publicKey,
    signingKey: ca.key.keys.privateKey,
    signingAlgorithm: signingAlgorithm(ca.key.keys.privateKey),
    extensions,
  });
  return cert.toString('pem') + '\n';
}

/** The DNS names and IPs a certificate is valid for, from its SAN extension. */
export function certSans(certPem: string): string[] {
  const text = new X509Certificate(certPem).subjectAltName ?? '';
  const out: string[] = [];
  for (const part of text.split(', ')) {
    const m = /^(DNS|IP Address):(.*)$/.exec(part);
    if (m) out.push(canonicalSan(m[2]!));
  }
  return out;
}

/** IPv6 addresses compare by value, not by spelling */
export function canonicalSan(s: string): string {
  // the URL parser prints IPv6 in its canonical compressed form
  if (net.isIPv6(s)) return new URL(`http://[${s}]/`).hostname.slice(1, -1);
  return s.toLowerCase();
}

/** True when `certPem` was signed by `caPem` and is valid for at least `marginDays` more days. */
export function isIssuedByAndFresh(certPem: string, caPem: string, marginDays: number): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
    return new Date(cert.validTo).getTime() - Date.now() > marginDays * 86_400_000;
  } catch {
    return false;
  }
}

/** True when the private key belongs to the certificate. */
export function keyMatchesCert(keyPem: string, certPem: string): boolean {
  try {
    return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/** Splits a PEM bundle into its certificates. */
export function splitPemCerts(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((c) => c + '\n') ?? [];
}
