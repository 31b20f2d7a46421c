// YAML bodies: the document as YAML (flow JSON is YAML too), and the constructs only YAML has
// that a decoder must survive: alias bombs, tags, merge keys, several documents, deep block
// and flow nesting, complex keys.

import { toJsonText, type Json } from './json-text.js';
import type { Prng } from './prng.js';

/** block-style YAML of a plain document (keys and strings always quoted: no YAML surprises) */
export function toBlockYaml(doc: Json, indent = ''): string {
  if (Array.isArray(doc)) {
    if (doc.length === 0) return '[]';
    return doc.map((v) => `\n${indent}- ${toBlockYaml(v, indent + '  ').replace(/^\n\s*/, '')}`).join('');
  }
  if (doc !== null && typeof doc === 'object') {
    const entries = Object.entries(doc);
    if (entries.length === 0) return '{}';
    return entries
      .map(([k, v]) => {
        const value = toBlockYaml(v, indent + '  ');
        return `\n${indent}${JSON.stringify(k)}:${value.startsWith('\n') ? value : ` ${value}`}`;
      })
      .join('');
  }
  return toJsonText(doc);
}

export function yamlDocument(doc: Json, rng: Prng): string {
  return rng.bool() ? toJsonText(doc) : toBlockYaml(doc).replace(/^\n/, '');
}

/** a hostile YAML body; `base` is a valid document's YAML to splice into */
export function hostileYaml(base: string, rng: Prng): { text: string; how: string } {
  switch (rng.int(0, 9)) {
    case 0: {
      // each level refers to the one before ten times: 10^levels nodes once expanded
      const levels = rng.int(3, 12);
      const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      for (let i = 1; i < levels; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(',')}]`);
      return {
        text: `${lines.join('\n')}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata: *a${levels - 1}\n`,
        how: 'alias-bomb',
      };
    }
    case 1: {
      const depth = rng.pick([100, 1000, 3000, 10_000, rng.size(50_000)]);
      return {
        text: rng.bool() ? '['.repeat(depth) + ']'.repeat(depth) : '{a: '.repeat(depth) + '1' + '}'.repeat(depth),
        how: 'deep-flow',
      };
    }
    case 2: {
      const depth = rng.pick([100, 1000, 3000, rng.size(10_000)]);
      let text = '';
      for (let i = 0; i < depth; i++) text += `${' '.repeat(i)}a:\n`;
      return { text, how: 'deep-block' };
    }
    case 3: {
      const tagged = rng.pick([
        'data: !!binary aGVsbG8=',
        'data: !!python/object/apply:os.system ["true"]',
        'data: !<tag:yaml.org,2002:str> x',
        'data: !custom {a: 1}',
        'data: !!set {a, b}',
        'data: !!omap [{a: 1}]',
        'data: !!timestamp 2001-12-14t21:59:43.10-05:00',
        'data: {k: !!int "12"}',
        'data: {k: !!float .nan}',
        'data: {k: !!null ""}',
        'metadata: !!str {name: x}',
        '%TAG ! tag:evil.example,2000:\n---\ndata: !x 1',
      ]);
      return { text: `${base}\n${tagged}\n`, how: 'tags' };
    }
    case 4:
      return { text: `base: &b {k: v}\n${base}\ndata:\n  <<: *b\n  <<: [*b, *b]\n`, how: 'merge-keys' };
    case 5:
      return { text: `${base}\n---\n${base}\n---\nkind: Pod\n...\n`, how: 'several-documents' };
    case 6:
      return { text: `${base}\n? [a, b]\n: c\n? {x: 1}\n: d\n~: null-key\n`, how: 'complex-keys' };
    case 7:
      return {
        text: `${base}\ndata: {k: 0o17, j: 0x1F, y: yes, n: no, o: on, t: 1_000, e: 1e400, h: .inf, z: -.Inf, d: 2024-01-01}\n`,
        how: 'scalars',
      };
    case 8:
      return {
        text: rng.pick([
          `\ufeff${base}`,
          `${base}\n\tdata: x\n`,
          `${base}\u0000`,
          `*undefined\n${base}`,
          `&a [*a]`,
          `a: &a\n  b: *a\n`,
          `${base}\n"unterminated: x`,
        ]),
        how: 'syntax',
      };
    default:
      return {
        text: `${base}\n${'x'.repeat(rng.size(100))}: ${rng.pick(['|', '>', '|-', '>+'])}\n  ${'y'.repeat(rng.size(200_000))}\n`,
        how: 'block-scalars',
      };
  }
}
