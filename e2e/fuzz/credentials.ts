// Authorization headers no authenticator accepts: the first thing a replica parses from a
// client it does not know yet. Service account tokens (JWTs with broken parts, algorithms,
// claims of the wrong types, deep or huge JSON), bootstrap-token look-alikes, odd schemes and
// plain junk. None is a credential, so each request must be refused.

import type { Json } from './json-text.js';
import type { Prng } from './prng.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** JSON text nested `depth` levels (arrays or objects) around a value */
function nested(depth: number, rng: Prng): string {
  const open = rng.bool() ? '['.repeat(depth) : '{"a":'.repeat(depth);
  const close = open.startsWith('[') ? ']'.repeat(depth) : '}'.repeat(depth);
  return `${open}1${close}`;
}

function hostileHeader(rng: Prng): string {
  switch (rng.int(0, 7)) {
    case 0:
      return JSON.stringify({ alg: 'RS256', kid: rng.string(rng.size(20_000)) });
    case 1:
      return JSON.stringify({ alg: rng.pick(['none', 'HS256', 'ES512', 'PS256', '', 'RS256 ']), typ: 'JWT' });
    case 2:
      return JSON.stringify({ alg: rng.pick<Json>([1, null, ['RS256'], { a: 1 }, true]) });
    case 3:
      return nested(rng.pick([100, 1000, 5000]), rng);
    case 4:
      return JSON.stringify({ alg: 'RS256', crit: ['exp'], jku: 'https://127.0.0.1:1/keys', x5u: 'file:///etc/passwd' });
    case 5:
      return rng.pick(['', 'null', '[]', '"RS256"', '{', '{"alg":"RS256",}', '\u0000']);
    case 6:
      return JSON.stringify({ alg: 'RS256', kid: 'k', enc: 'A256GCM', zip: 'DEF' });
    default:
      return JSON.stringify({ alg: 'RS256', kid: '' });
  }
}

/** claims shaped like a bound service account token's, one of them broken */
function hostileClaims(rng: Prng): string {
  const claims: Record<string, Json> = {
    iss: ISSUER,
    sub: 'system:serviceaccount:fuzz-a:default',
    aud: ['https://kubernetes.default.svc.cluster.local'],
    exp: Math.floor(Date.now() / 1000) + 3600,
    iat: Math.floor(Date.now() / 1000),
    nbf: Math.floor(Date.now() / 1000),
    'kubernetes.io': {
      namespace: 'fuzz-a',
      serviceaccount: { name: 'default', uid: '00000000-0000-0000-0000-000000000000' },
      pod: { name: 'target', uid: '00000000-0000-0000-0000-000000000001' },
    },
  };
  switch (rng.int(0, 8)) {
    case 0:
      claims.exp = rng.pick<Json>([1e308, -1, '9999999999', null, 1.5, 2 ** 63, []]);
      break;
    case 1:
      claims.aud = rng.pick<Json>([null, 7, [[['x']]], Array.from({ length: rng.size(20_000) }, (_, i) => `a${i}`), '']);
      break;
    case 2:
      claims.sub = rng.pick<Json>(['system:serviceaccount:', 'system:serviceaccount:a:b:c', 'x'.repeat(50_000), 1]);
      break;
    case 3:
      claims['kubernetes.io'] = rng.pick<Json>([null, 'x', [], { namespace: { a: 1 } }, { serviceaccount: 'default' }]);
      break;
    case 4:
      claims.iss = rng.pick<Json>(['', 'https://evil.example', ['https://kubernetes.default.svc.cluster.local'], null]);
      break;
    case 5:
      return nested(rng.pick([100, 1000, 5000]), rng);
    case 6:
      for (let i = rng.size(5000); i > 0; i--) claims[`c${i}`] = rng.string(rng.int(0, 30));
      break;
    case 7:
      return rng.pick(['', 'null', '{}', '[', '{"exp":1e99999}', '{"__proto__":{"admin":true}}']);
    default:
      break;
  }
  return JSON.stringify(claims);
}

function jwt(rng: Prng): { token: string; how: string } {
  const header = rng.bool(0.7) ? hostileHeader(rng) : JSON.stringify({ alg: 'RS256', kid: 'fuzz' });
  const claims = hostileClaims(rng);
  const signature = rng.pick(['', b64url(rng.bytes(256)), b64url(rng.bytes(rng.size(30_000))), '!!not base64!!', '====']);
  const parts = [b64url(header), b64url(claims), signature];
  switch (rng.int(0, 4)) {
    case 0:
      return { token: parts.slice(0, 2).join('.'), how: 'jwt.two-parts' };
    case 1:
      return { token: [...parts, b64url('x'), b64url('y')].join('.'), how: 'jwt.five-parts' };
    case 2:
      return { token: parts.map((p) => p.replace(/[A-Za-z]/g, (c) => (rng.bool(0.05) ? '%' : c))).join('.'), how: 'jwt.bad-base64' };
    default:
      return { token: parts.join('.'), how: 'jwt' };
  }
}

/** a value for the Authorization header, and what it tries */
export function hostileAuthorization(rng: Prng): { value: string; how: string } {
  switch (rng.int(0, 5)) {
    case 0:
    case 1: {
      const { token, how } = jwt(rng);
      return { value: `Bearer ${token}`, how };
    }
    case 2:
      // bootstrap tokens are `[a-z0-9]{6}.[a-z0-9]{16}`: near misses and the shape itself
      return {
        value: `Bearer ${rng.pick([
          `${rng.string(6, 'abcdefghijklmnopqrstuvwxyz0123456789')}.${rng.string(16, 'abcdefghijklmnopqrstuvwxyz0123456789')}`,
          `${rng.string(6)}.${rng.string(rng.size(200))}`,
          'abcdef.',
          '.0123456789abcdef',
          `ABCDEF.${'0'.repeat(16)}`,
        ])}`,
        how: 'bootstrap',
      };
    case 3:
      return {
        value: rng.pick([
          'Bearer',
          'Bearer ',
          'bearer fuzz',
          'Bearer  two  spaces',
          `Basic ${b64url('admin:admin')}`,
          'Negotiate YII=',
          'Bearer \u00e9\u00e9',
          'Bearer a,Bearer b',
          `Bearer ${'.'.repeat(rng.size(10_000))}`,
        ]),
        how: 'scheme',
      };
    default:
      return {
        value: `Bearer ${rng.string(rng.size(60_000), 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~+/=')}`,
        how: 'junk',
      };
  }
}
