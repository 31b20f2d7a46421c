import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeYaml } from './encode.js';
import { decodeYaml } from './yaml.js';

test("YAML out quotes every string go-yaml v2 quotes, so that YAML 1.1 readers (kube's among them) read strings back", () => {
  const data: Record<string, unknown> = {
    a: 'yes',
    b: '0644',
    c: 'on',
    d: 'y',
    e: '1_000',
    f: '2001-12-14',
    g: '1:20',
    h: 'Off',
    i: '0b101',
    j: '',
    k: 'plain text',
    l: 'NaN',
    m: '2001-13-40',
    yes: 'a key',
    n: 12,
    o: true,
    p: null,
  };
  const text = encodeYaml({ data });
  assert.equal(
    text,
    [
      'data:',
      '  a: "yes"',
      '  b: "0644"',
      '  c: "on"',
      '  d: "y"',
      '  e: "1_000"',
      '  f: "2001-12-14"',
      '  g: "1:20"',
      '  h: "Off"',
      '  i: "0b101"',
      '  j: ""',
      '  k: plain text',
      '  l: NaN',
      '  m: 2001-13-40',
      '  "n": 12',
      '  o: true',
      '  p: null',
      '  "yes": a key',
      '',
    ].join('\n'),
  );
  assert.deepEqual(decodeYaml(text), { data });
});
