// Service account token keys: PEM files of RSA or ECDSA keys (public or private, or
// certificates), as --service-account-key-file and --service-account-signing-key-file take
// them. A key's id is kube-apiserver's: base64url(SHA-256(PKIX DER of the public key)), so
// tokens and /openid/v1/jwks name keys exactly as kube-apiserver would.

import { createHash, createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

export interface VerificationKey {
  key: KeyObject;
  keyId: string;
  algorithm: SigningAlgorithm;
}

export interface SigningKey extends VerificationKey {
  privateKey: KeyObject;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

export function algorithmOf(publicKey: KeyObject): SigningAlgorithm {
  if (publicKey.asymmetricKeyType === 'rsa') return 'RS256';
  if (publicKey.asymmetricKeyType === 'ec') {
    switch (publicKey.asymmetricKeyDetails?.namedCurve) {
      case 'prime256v1':
        return 'ES256';
      case 'secp384r1':
        return 'ES384';
      case 'secp521r1':
        return 'ES512';
    }
  }
  throw new Error(`unsupported key type ${publicKey.asymmetricKeyType} (want RSA or ECDSA P-256/P-384/P-521)`);
}

function verificationKey(publicKey: KeyObject): VerificationKey {
  return { key: publicKey, keyId: keyIdOf(publicKey), algorithm: algorithmOf(publicKey) };
}

/** every RSA/ECDSA public key in a PEM text (private keys and certificates give theirs) */
export function parsePublicKeys(pem: string): VerificationKey[] {
  const keys: VerificationKey[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const [block, type] = m as unknown as [string, string];
    let publicKey: KeyObject | undefined;
    try {
      if (type === 'CERTIFICATE') publicKey = new X509Certificate(block).publicKey;
      else if (type.endsWith('PRIVATE KEY')) publicKey = createPublicKey(createPrivateKey(block));
      else if (type.endsWith('PUBLIC KEY')) publicKey = createPublicKey(block);
    } catch {
      publicKey = undefined;
    }
    if (!publicKey) continue;
    if (publicKey.asymmetricKeyType !== 'rsa' && publicKey.asymmetricKeyType !== 'ec') continue;
    keys.push(verificationKey(publicKey));
  }
  if (keys.length === 0) throw new Error('data does not contain any valid RSA or ECDSA public keys');
  return keys;
}

export function loadPublicKeys(file: string): VerificationKey[] {
  try {
    return parsePublicKeys(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`error reading public key file ${file}: ${(err as Error).message}`);
  }
}

/** the first RSA or ECDSA private key of a PEM text */
export function parseSigningKey(pem: string): SigningKey {
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const [block, type] = m as unknown as [string, string];
    if (!type.endsWith('PRIVATE KEY')) continue;
    const privateKey = createPrivateKey(block);
    const publicKey = createPublicKey(privateKey);
    return { ...verificationKey(publicKey), privateKey };
  }
  throw new Error('data does not contain a valid RSA or ECDSA private key');
}

export function loadSigningKey(file: string): SigningKey {
  try {
    return parseSigningKey(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`failed to parse service-account-issuer-key-file ${file}: ${(err as Error).message}`);
  }
}

/** keys without repeats (the same key from two files, or the signing key among them) */
export function uniqueKeys(keys: readonly VerificationKey[]): VerificationKey[] {
  const seen = new Set<string>();
  return keys.filter((k) => {
    if (seen.has(k.keyId)) return false;
    seen.add(k.keyId);
    return true;
  });
}
