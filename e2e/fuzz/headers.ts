// Header sets that strain negotiation and the filters: odd Content-Type and Accept values,
// Content-Encoding (gzip bombs), impersonation, many and large headers.

import { gzipSync } from 'node:zlib';
import type { Prng } from './prng.js';

export const ODD_CONTENT_TYPES = [
  'application/json; charset=utf-16',
  'application/json;;',
  'application/json; charset="utf-8"; x=y',
  'APPLICATION/JSON',
  'application/*',
  '*/*',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json, application/yaml',
  'application/vnd.kubernetes.protobuf;stream=watch',
  'application/cbor',
  'application/apply-patch+cbor',
  'application/json-seq',
  '',
  ';',
  'application/',
  'a'.repeat(5000),
  'application/json\u00e9',
];

export const ODD_ACCEPTS = [
  'application/json;as=Table;g=meta.k8s.io;v=v1',
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  'application/json;as=Table;g=meta.k8s.io;v=v1beta1;includeObject=Object',
  'application/json;as=Nope;g=x;v=y',
  'application/vnd.kubernetes.protobuf',
  'application/yaml',
  'text/html',
  'application/json;q=0',
  '*/*;q=0.5, text/plain',
  'application/json;stream=watch',
  'application/cbor',
  ',,,',
  'application/json;as=Table;g=meta.k8s.io;v=v1;' + 'x=y;'.repeat(1000),
  'application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1',
];

/** gzip of a long run of zeros: small on the wire, huge once inflated */
let bomb: Buffer | undefined;
export function gzipBomb(): Buffer {
  bomb ??= gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  return bomb;
}

/** extra headers for a request (impersonation only makes sense from the limited user) */
export function hostileHeaders(rng: Prng): { headers: Record<string, string>; how: string; gzipBody: boolean } {
  switch (rng.int(0, 5)) {
    case 0:
      return {
        headers: {
          'impersonate-user': rng.pick(['kubernetes-admin', 'system:admin', '', 'x'.repeat(10_000)]),
          ...(rng.bool() ? { 'impersonate-group': 'system:masters' } : {}),
          ...(rng.bool() ? { 'impersonate-uid': 'u' } : {}),
        },
        how: 'impersonate',
        gzipBody: false,
      };
    case 1:
      return {
        headers: { [`impersonate-extra-${rng.pick(['scopes', 'a%2Fb', '%zz', 'x'.repeat(300)])}`]: 'v' },
        how: 'impersonate-extra',
        gzipBody: false,
      };
    case 2: {
      const headers: Record<string, string> = {};
      for (let i = rng.pick([20, 127, 128, 200, 500]); i > 0; i--) headers[`x-fuzz-${i}`] = rng.string(rng.int(1, 40));
      return { headers, how: 'many-headers', gzipBody: false };
    }
    case 3:
      return {
        headers: { 'x-fuzz-large': 'a'.repeat(rng.pick([8 * 1024, 17 * 1024, 64 * 1024, 200 * 1024])) },
        how: 'large-header',
        gzipBody: false,
      };
    case 4:
      return {
        headers: { 'content-encoding': rng.pick(['gzip', 'deflate', 'br', 'identity', 'gzip, gzip', 'x']) },
        how: 'content-encoding',
        gzipBody: true,
      };
    default:
      return {
        headers: {
          'audit-id': rng.pick(['x'.repeat(10_000), '\u00e9', '']),
          'x-remote-user': 'kubernetes-admin',
          'x-remote-group': 'system:masters',
          'user-agent': 'x'.repeat(rng.size(50_000)),
        },
        how: 'spoofing',
        gzipBody: false,
      };
  }
}
