import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { registerNetworkLibraries } from './network-library.js';

const env = registerNetworkLibraries(new Environment());
const ev = (expr: string) => {
  const p = env.parse(expr);
  const c = p.check() as { valid: boolean; error?: Error };
  assert.ok(c.valid, `${expr}: ${c.error?.message}`);
  return p({});
};

test('ip: parsing, family, classes, canonical text', () => {
  assert.equal(ev("isIP('10.0.0.1')"), true);
  assert.equal(ev("isIP('010.0.0.1')"), false);
  assert.equal(ev("isIP('::ffff:10.0.0.1')"), false);
  assert.equal(ev("isIP('fe80::1%eth0')"), false);
  assert.equal(ev("ip('10.0.0.1').family()"), 4n);
  assert.equal(ev("ip('2001:db8::1').family()"), 6n);
  assert.equal(ev("string(ip('2001:DB8:0:0:0:0:0:1'))"), '2001:db8::1');
  assert.equal(ev("string(ip('2001:db8:0:1:0:0:0:1'))"), '2001:db8:0:1::1');
  assert.equal(ev("ip('127.0.0.1').isLoopback() && ip('::1').isLoopback()"), true);
  assert.equal(ev("ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()"), true);
  assert.equal(ev("ip('169.254.1.1').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()"), true);
  assert.equal(ev("ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()"), true);
  assert.equal(ev("ip('8.8.8.8').isGlobalUnicast() && !ip('127.0.0.1').isGlobalUnicast()"), true);
  assert.throws(() => ev("ip('nope')"), /parse error/);
});

test('cidr: containment, masking, prefix length', () => {
  assert.equal(ev("cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))"), true);
  assert.equal(ev("cidr('10.0.0.0/8').containsIP('11.0.0.1')"), false);
  assert.equal(ev("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')"), true);
  assert.equal(ev("cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))"), false);
  assert.equal(ev("string(cidr('192.168.1.5/24').masked())"), '192.168.1.0/24');
  assert.equal(ev("cidr('2001:db8::/32').prefixLength()"), 32n);
  assert.equal(ev("cidr('2001:db8::/32').containsIP('2001:db8:1::1')"), true);
  assert.equal(ev("string(cidr('192.168.1.5/24').ip())"), '192.168.1.5');
  assert.equal(ev("isCIDR('10.0.0.0/33')"), false);
  assert.equal(ev("isCIDR('10.0.0.0')"), false);
});

test('url: parts of absolute URLs and paths', () => {
  assert.equal(ev("url('https://example.com:8443/a/b?x=1&x=2').getScheme()"), 'https');
  assert.equal(ev("url('https://example.com:8443/a/b?x=1&x=2').getHost()"), 'example.com:8443');
  assert.equal(ev("url('https://[::1]:80/').getHostname()"), '::1');
  assert.equal(ev("url('https://example.com:8443/a/b').getPort()"), '8443');
  assert.equal(ev("url('https://example.com/a%20b').getEscapedPath()"), '/a%20b');
  assert.equal(ev("url('/just/a/path').getEscapedPath()"), '/just/a/path');
  assert.deepEqual(ev("url('https://example.com/?x=1&x=2&y=3').getQuery()['x']"), ['1', '2']);
  assert.equal(ev("isURL('not a url')"), false);
});

test("url: read as Go's net/url reads it, as kube's library does", () => {
  assert.equal(ev("url('https:://kubernetes.io/').getScheme()"), 'https');
  assert.equal(ev("url('https:://kubernetes.io/').getHost()"), '');
  assert.equal(ev("url('https:://kubernetes.io/').getEscapedPath()"), '');
  assert.equal(ev("isURL('https:://kubernetes.io/')"), true);
  assert.equal(ev("url('https://example.com/path with spaces/').getEscapedPath()"), '/path%20with%20spaces/');
  assert.equal(ev("url('https://example.com').getEscapedPath()"), '');
  assert.equal(ev("url('https://Example.com:0443/a/../b').getHostname()"), 'Example.com');
  assert.equal(ev("url('https://Example.com:0443/a/../b').getPort()"), '0443');
  assert.equal(ev("url('https://Example.com:0443/a/../b').getEscapedPath()"), '/a/../b');
  assert.deepEqual(
    ev("url('https://example.com/path?key with spaces=value with spaces').getQuery()"),
    new Map([['key with spaces', ['value with spaces']]]),
  );
  assert.equal(ev("url('https://e/a b') == url('https://e/a%20b')"), true);
  assert.equal(ev("url('https://e/a') == url('https://e/a#f')"), false);
  assert.equal(ev("isURL('//host/path')"), true);
  assert.equal(ev("isURL('https://a b/')"), false);
  assert.throws(
    () => ev("url('https://a:x/')"),
    /URL parse error during conversion from string: parse "https:\/\/a:x\/": invalid port ":x" after host/,
  );
});
