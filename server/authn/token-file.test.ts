import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsv } from './csv.js';
import { createTokenFileAuthenticator, parseTokenFile } from './token-file.js';

describe('CSV as Go reads it', () => {
  it('splits records and fields, keeps quoted commas, doubled quotes and newlines', () => {
    assert.deepEqual(parseCsv('a,b,c\n"x,y","say ""hi""","multi\nline"\r\n\nlast'), [
      ['a', 'b', 'c'],
      ['x,y', 'say "hi"', 'multi\nline'],
      ['last'],
    ]);
  });
  it('rejects a bare quote and text after a closing quote', () => {
    assert.throws(() => parseCsv('a"b,c\n'), /bare " in non-quoted-field/);
    assert.throws(() => parseCsv('"a"b,c\n'), /extraneous or missing " in quoted-field/);
    assert.throws(() => parseCsv('"abc'), /extraneous or missing "/);
  });
});

describe('static token file', () => {
  it('maps tokens to users with uid and the quoted group list', async () => {
    const tokens = parseTokenFile('t1,alice,uid1,"g1,g2"\nt2,bob,uid2\nt3,carol,,single\n', 'tokens.csv');
    const auth = createTokenFileAuthenticator(tokens);
    assert.deepEqual(await auth('t1'), { username: 'alice', uid: 'uid1', groups: ['g1', 'g2'] });
    assert.deepEqual(await auth('t2'), { username: 'bob', uid: 'uid2', groups: [] });
    assert.deepEqual(await auth('t3'), { username: 'carol', groups: ['single'] });
    assert.equal(await auth('nope'), null);
  });
  it("fails on a short record with kube-apiserver's message; warns on empty and duplicate tokens", () => {
    assert.throws(
      () => parseTokenFile('t1,alice\n', 'f.csv'),
      /token file 'f.csv' must have at least 3 columns \(token, user name, user uid\), found 2/,
    );
    const warnings: string[] = [];
    const tokens = parseTokenFile(',x,y\nt,a,1\nt,b,2\n', 'f.csv', (w) => warnings.push(w.message));
    assert.equal(tokens.get('t')?.username, 'b');
    assert.deepEqual(warnings, [
      "empty token has been found in token file 'f.csv', record number '1'",
      "duplicate token has been found in token file 'f.csv', record number '3'",
    ]);
  });
});
