import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapedPath, hostnameOf, parseRequestURI, parseURL, portOf, queryOf, urlString } from './go-url.js';

const parts = (s: string) => {
  const u = parseURL(s);
  return {
    scheme: u.scheme,
    opaque: u.opaque,
    host: u.host,
    hostname: hostnameOf(u),
    port: portOf(u),
    path: escapedPath(u),
    query: u.rawQuery,
    fragment: u.fragment,
  };
};

test("Go's opaque form: a rootless path after the scheme", () => {
  assert.deepEqual(parts('https:://kubernetes.io/'), {
    scheme: 'https',
    opaque: '://kubernetes.io/',
    host: '',
    hostname: '',
    port: '',
    path: '',
    query: '',
    fragment: '',
  });
  assert.equal(urlString(parseURL('https:://kubernetes.io/')), 'https:://kubernetes.io/');
  assert.equal(parseRequestURI('mailto:someone@example.com').opaque, 'someone@example.com');
});

test('hosts, ports and paths are kept as written', () => {
  assert.deepEqual(parts('HTTPS://Example.COM:0080/a/../b%2Fc?x=1#frag'), {
    scheme: 'https',
    opaque: '',
    host: 'Example.COM:0080',
    hostname: 'Example.COM',
    port: '0080',
    path: '/a/../b%2Fc',
    query: 'x=1',
    fragment: 'frag',
  });
  assert.equal(parts('https://[::1]:80/').hostname, '::1');
  assert.equal(parts('https://[::1]/').host, '[::1]');
  assert.equal(parts('https://example.com:/').port, '');
  assert.equal(parts('https://example.com/path with spaces/').path, '/path%20with%20spaces/');
  assert.equal(parts('https://example.com/%7e').path, '/%7e', 'a valid escaping is kept as written');
  assert.equal(parts('https://example.com').path, '');
  assert.equal(parts('/just/a/path').path, '/just/a/path');
  assert.equal(parts('https://user:pw@example.com/').host, 'example.com');
  assert.equal(urlString(parseURL('https://user:p%40w@example.com/a b?q#f g')), 'https://user:p%40w@example.com/a%20b?q#f%20g');
});

test('queries: repeated keys, + and %-escapes unescaped, bad pairs left out', () => {
  const q = queryOf(parseURL('https://e/p?k1=a&k2=b&k2=c&a+b=%41&bad=%zz&semi;x=1&&flag'));
  assert.deepEqual(
    [...q],
    [
      ['k1', ['a']],
      ['k2', ['b', 'c']],
      ['a b', ['A']],
      ['flag', ['']],
    ],
  );
  assert.deepEqual([...queryOf(parseURL('https://e/p?'))], []);
});

test('what ParseRequestURI refuses, in Go words', () => {
  const refusal = (s: string) => {
    try {
      parseRequestURI(s);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };
  assert.equal(refusal('not a url'), 'parse "not a url": invalid URI for request');
  assert.equal(refusal(''), 'parse "": empty url');
  assert.equal(refusal(':x'), 'parse ":x": missing protocol scheme');
  assert.equal(refusal('https://a b/'), 'parse "https://a b/": invalid character " " in host name');
  assert.equal(refusal('https://a:x/'), 'parse "https://a:x/": invalid port ":x" after host');
  assert.equal(refusal('https://[::1/'), 'parse "https://[::1/": missing \']\' in host');
  assert.equal(refusal('https://e/%zz'), 'parse "https://e/%zz": invalid URL escape "%zz"');
  assert.equal(refusal('https://e/\n'), 'parse "https://e/\\n": net/url: invalid control character in URL');
  assert.equal(refusal('https://a b@e/'), 'parse "https://a b@e/": net/url: invalid userinfo');
  assert.equal(refusal('//host/path'), undefined);
  assert.equal(parseRequestURI('//host/path').host, '', 'without a scheme, ParseRequestURI reads // as a path');
  assert.equal(parseURL('//host/path').host, 'host');
  assert.equal(refusal('https://e/p#f'), undefined);
  assert.equal(parseRequestURI('https://e/p#f').path, '/p#f', 'ParseRequestURI does not split off a fragment');
});
