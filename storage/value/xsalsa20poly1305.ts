// NaCl's secretbox (XSalsa20 stream cipher + Poly1305 authenticator), as golang.org/x/crypto's
// nacl/secretbox and libsodium's crypto_secretbox_easy compute it. node:crypto has neither
// XSalsa20 nor a raw Poly1305, so both are here, checked against libsodium's output in the
// tests. The sealed form is Go's: 16-byte tag, then the ciphertext (the nonce is the caller's).
//
//   subkey    = HSalsa20(key, nonce[0..16])
//   keystream = Salsa20(subkey, nonce[16..24]), block counter from 0
//   the first 32 keystream bytes are the Poly1305 key; the message is XORed with the rest

import { timingSafeEqual } from 'node:crypto';

export const SECRETBOX_KEY_BYTES = 32;
export const SECRETBOX_NONCE_BYTES = 24;
export const SECRETBOX_OVERHEAD = 16;

// "expand 32-byte k"
const SIGMA = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574] as const;

const rotl = (v: number, n: number): number => (v << n) | (v >>> (32 - n));

/** 20 Salsa20 rounds over `x` in place */
function rounds(x: Uint32Array): void {
  for (let i = 0; i < 10; i++) {
    // columns
    quarter(x, 0, 4, 8, 12);
    quarter(x, 5, 9, 13, 1);
    quarter(x, 10, 14, 2, 6);
    quarter(x, 15, 3, 7, 11);
    // rows
    quarter(x, 0, 1, 2, 3);
    quarter(x, 5, 6, 7, 4);
    quarter(x, 10, 11, 8, 9);
    quarter(x, 15, 12, 13, 14);
  }
}

function quarter(x: Uint32Array, a: number, b: number, c: number, d: number): void {
  x[b]! ^= rotl((x[a]! + x[d]!) | 0, 7);
  x[c]! ^= rotl((x[b]! + x[a]!) | 0, 9);
  x[d]! ^= rotl((x[c]! + x[b]!) | 0, 13);
  x[a]! ^= rotl((x[d]! + x[c]!) | 0, 18);
}

/** the Salsa20 input block: constants, the 32-byte key, and 16 bytes of nonce/counter */
function inputBlock(key: Buffer, sixteen: Buffer): Uint32Array {
  const s = new Uint32Array(16);
  s[0] = SIGMA[0];
  s[5] = SIGMA[1];
  s[10] = SIGMA[2];
  s[15] = SIGMA[3];
  for (let i = 0; i < 4; i++) {
    s[1 + i] = key.readUInt32LE(4 * i);
    s[11 + i] = key.readUInt32LE(16 + 4 * i);
    s[6 + i] = sixteen.readUInt32LE(4 * i);
  }
  return s;
}

function hsalsa20(key: Buffer, nonce16: Buffer): Buffer {
  const x = inputBlock(key, nonce16);
  rounds(x);
  const out = Buffer.alloc(32);
  [0, 5, 10, 15, 6, 7, 8, 9].forEach((w, i) => out.writeUInt32LE(x[w]!, 4 * i));
  return out;
}

/** `length` bytes of Salsa20 keystream for `key` and the 8-byte `nonce` */
function salsa20Stream(key: Buffer, nonce8: Buffer, length: number): Buffer {
  const out = Buffer.alloc(Math.ceil(length / 64) * 64);
  const sixteen = Buffer.alloc(16);
  nonce8.copy(sixteen, 0);
  const input = inputBlock(key, sixteen);
  const x = new Uint32Array(16);
  for (let block = 0, off = 0; off < length; block++, off += 64) {
    // 64-bit little-endian block counter in words 8 and 9
    input[8] = block >>> 0;
    input[9] = Math.floor(block / 0x1_0000_0000) >>> 0;
    x.set(input);
    rounds(x);
    for (let i = 0; i < 16; i++) out.writeUInt32LE((x[i]! + input[i]!) >>> 0, off + 4 * i);
  }
  return out.subarray(0, length);
}

const P1305 = (1n << 130n) - 5n;
const CLAMP = 0x0ffffffc0ffffffc0ffffffc0fffffffn;

function leToBigInt(b: Buffer): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

/** the Poly1305 tag of `msg` under the one-time 32-byte `key` */
export function poly1305(msg: Buffer, key: Buffer): Buffer {
  const r = leToBigInt(key.subarray(0, 16)) & CLAMP;
  const s = leToBigInt(key.subarray(16, 32));
  let acc = 0n;
  for (let off = 0; off < msg.length; off += 16) {
    const chunk = msg.subarray(off, Math.min(off + 16, msg.length));
    const n = leToBigInt(chunk) + (1n << BigInt(8 * chunk.length));
    acc = ((acc + n) * r) % P1305;
  }
  let tag = (acc + s) & ((1n << 128n) - 1n);
  const out = Buffer.alloc(16);
  for (let i = 0; i < 16; i++) {
    out[i] = Number(tag & 0xffn);
    tag >>= 8n;
  }
  return out;
}

function keystream(key: Buffer, nonce: Buffer, length: number): Buffer {
  if (key.length !== SECRETBOX_KEY_BYTES) throw new Error(`secretbox key must be ${SECRETBOX_KEY_BYTES} bytes`);
  if (nonce.length !== SECRETBOX_NONCE_BYTES) throw new Error(`secretbox nonce must be ${SECRETBOX_NONCE_BYTES} bytes`);
  const subkey = hsalsa20(key, nonce.subarray(0, 16));
  return salsa20Stream(subkey, nonce.subarray(16, 24), 32 + length);
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** tag | ciphertext */
export function secretboxSeal(message: Buffer, nonce: Buffer, key: Buffer): Buffer {
  const stream = keystream(key, nonce, message.length);
  const ciphertext = xor(message, stream.subarray(32));
  return Buffer.concat([poly1305(ciphertext, stream.subarray(0, 32)), ciphertext]);
}

/** the message, or null when the box does not authenticate */
export function secretboxOpen(box: Buffer, nonce: Buffer, key: Buffer): Buffer | null {
  if (box.length < SECRETBOX_OVERHEAD) return null;
  const ciphertext = box.subarray(SECRETBOX_OVERHEAD);
  const stream = keystream(key, nonce, ciphertext.length);
  const expected = poly1305(ciphertext, stream.subarray(0, 32));
  if (!timingSafeEqual(expected, box.subarray(0, SECRETBOX_OVERHEAD))) return null;
  return xor(ciphertext, stream.subarray(32));
}
