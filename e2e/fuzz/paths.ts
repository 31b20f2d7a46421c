// Paths that try to name something other than what they seem to: dot segments (plain and
// escaped), escaped slashes, backslashes, empty segments, unicode, overlong names, unknown
// groups, versions, resources and subresources.

import type { Prng } from './prng.js';

const HOSTILE_SEGMENTS = [
  '.',
  '..',
  '%2e',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e.',
  '..%2f',
  '%2f',
  '%2F',
  '\\',
  '..\\',
  '%5c',
  '',
  '%00',
  '%',
  '%zz',
  ';',
  '..;',
  '*',
  '~',
  '%20',
  '?',
  '#',
];

export function hostileSegment(rng: Prng): string {
  switch (rng.int(0, 5)) {
    case 0:
    case 1:
      return rng.pick(HOSTILE_SEGMENTS);
    case 2:
      return 'x'.repeat(rng.pick([254, 253, 64, 63, 10_000, rng.size(200_000)]));
    case 3:
      return encodeURIComponent(rng.pick(['\u00e9t\u00e9', '\u0130', '\u212a', '\ud83d\ude00', '\u202e', 'A\u030a', '\uff0e\uff0e']));
    case 4:
      return rng.pick(['UPPER', '-lead', 'trail-', 'a..b', 'a_b', 'a:b', 'a@b']);
    default:
      return rng.string(rng.int(1, 20), 'abc.-_%2F5c');
  }
}

/** a path under the fuzz namespace that is odd somewhere; `name` is the object it means to name */
export function hostilePath(rng: Prng, namespace: string, resource: string, name: string): string {
  const seg = (): string => hostileSegment(rng);
  const choices: (() => string)[] = [
    () => `/api/v1/namespaces/${namespace}/${resource}/${seg()}`,
    () =>
      `/api/v1/namespaces/${namespace}/${resource}/${seg()}/${rng.pick(['status', 'scale', 'log', 'exec', 'proxy', 'binding', 'eviction', 'ephemeralcontainers', seg()])}`,
    () => `/api/v1/namespaces/${namespace}/${seg()}/${name}`,
    () => `/api/v1/namespaces/${seg()}/${resource}/${name}`,
    () => `/api/v1/namespaces/${seg()}/${resource}`,
    () => `/api/v1/namespaces/${namespace}/${resource}/${name}/${seg()}`,
    () => `/api/${rng.pick(['v2', 'v1beta1', 'V1', seg()])}/namespaces/${namespace}/${resource}/${name}`,
    () =>
      `/apis/${rng.pick(['unknown.example.com', 'apps', 'apps.', '..', seg()])}/${rng.pick(['v1', 'v9', seg()])}/namespaces/${namespace}/${resource}/${name}`,
    () => `/api/v1/${rng.pick(['', '/', './', '../'])}namespaces/${namespace}/${resource}/${name}`,
    () => `//api/v1/namespaces/${namespace}/${resource}/${name}`,
    () => `/api/v1/namespaces/${namespace}/${resource}/${name}${rng.pick(['/', '//', '/.', '/..', '%2f..', '\\..'])}`,
    () => `/api/v1/watch/namespaces/${namespace}/${resource}/${seg()}`,
    () => `/api/v1/namespaces/${namespace}/${resource}/${name}/../${rng.pick(['other', '..'])}`,
    () => `/${seg()}/${seg()}`,
  ];
  return rng.pick(choices)();
}
