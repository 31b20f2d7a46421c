import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeadError, parseRequestHead } from './h1-head.js';

const head = (...lines: string[]) => lines.join('\r\n');

function rejects(text: string, status: number): void {
  assert.throws(
    () => parseRequestHead(text),
    (err: unknown) => err instanceof HeadError && err.status === status,
    JSON.stringify(text),
  );
}

describe('HTTP/1.1 request heads', () => {
  it('reads the request line and the fields as node presents them', () => {
    const h = parseRequestHead(
      head(
        'GET /api/v1/namespaces?watch=1 HTTP/1.1',
        'Host: example',
        'host: other',
        'Accept:  application/json \t',
        'Accept: text/plain',
        'Cookie: a=1',
        'Cookie: b=2',
        'Set-Cookie: x=1',
        'Set-Cookie: y=2',
        'X-Empty:',
      ),
    );
    assert.equal(h.method, 'GET');
    assert.equal(h.url, '/api/v1/namespaces?watch=1');
    assert.equal(h.httpVersion, '1.1');
    assert.equal(h.headers.host, 'example');
    assert.equal(h.headers.accept, 'application/json, text/plain');
    assert.equal(h.headers.cookie, 'a=1; b=2');
    assert.deepEqual(h.headers['set-cookie'], ['x=1', 'y=2']);
    assert.equal(h.headers['x-empty'], '');
    assert.deepEqual(h.rawHeaders.slice(0, 4), ['Host', 'example', 'host', 'other']);
    assert.deepEqual(h.body, { kind: 'length', length: 0 });
    assert.equal(h.keepAlive, true);
    assert.equal(h.upgrade, false);
  });

  it('keeps HTTP/1.1 connections unless told to close, HTTP/1.0 ones only when asked', () => {
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a', 'Connection: Close')).keepAlive, false);
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a', 'Connection: keep-alive, close')).keepAlive, false);
    assert.equal(parseRequestHead(head('GET / HTTP/1.0')).keepAlive, false);
    assert.equal(parseRequestHead(head('GET / HTTP/1.0', 'Connection: Keep-Alive')).keepAlive, true);
  });

  it('sees an upgrade only with both Connection: upgrade and an Upgrade field', () => {
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a', 'Connection: Upgrade', 'Upgrade: websocket')).upgrade, true);
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a', 'Upgrade: websocket')).upgrade, false);
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a', 'Connection: upgrade')).upgrade, false);
  });

  it('frames the body by Content-Length (repeated copies allowed) or chunked', () => {
    assert.deepEqual(parseRequestHead(head('POST / HTTP/1.1', 'Host: a', 'Content-Length: 12')).body, { kind: 'length', length: 12 });
    assert.deepEqual(parseRequestHead(head('POST / HTTP/1.1', 'Host: a', 'Content-Length: 5', 'Content-Length: 5')).body, {
      kind: 'length',
      length: 5,
    });
    assert.deepEqual(parseRequestHead(head('POST / HTTP/1.1', 'Host: a', 'Transfer-Encoding: Chunked')).body, { kind: 'chunked' });
  });

  it('refuses what could smuggle a request or cannot be read', () => {
    rejects(head('GET / HTTP/1.1', 'Host: a', 'X: 1\nY: 2'), 400);
    rejects(head('GET / HTTP/1.1', 'Host: a', 'X : 1'), 400);
    rejects(head('GET / HTTP/1.1', 'Host: a', 'X: 1', ' folded'), 400);
    rejects(head('GET / HTTP/1.1', 'Host: a', 'X: a\u0000b'), 400);
    rejects(head('GET / HTTP/1.1', 'Host: a', 'NoColon'), 400);
    rejects(head('GET / HTTP/1.1', 'Host: a', 'Bad[Name]: 1'), 400);
    rejects(head('POST / HTTP/1.1', 'Host: a', 'Content-Length: 5', 'Transfer-Encoding: chunked'), 400);
    rejects(head('POST / HTTP/1.1', 'Host: a', 'Content-Length: 5', 'Content-Length: 6'), 400);
    rejects(head('POST / HTTP/1.1', 'Host: a', 'Content-Length: -1'), 400);
    rejects(head('POST / HTTP/1.1', 'Host: a', 'Content-Length: 1e3'), 400);
    rejects(head('POST / HTTP/1.1', 'Host: a', 'Content-Length: 99999999999999999999'), 400);
    rejects(head('POST / HTTP/1.1', 'Host: a', 'Transfer-Encoding: gzip, chunked'), 501);
    rejects(head('POST / HTTP/1.0', 'Transfer-Encoding: chunked'), 400);
    rejects(head('GET / HTTP/1.1'), 400);
    rejects(head('GET / HTTP/2.0', 'Host: a'), 505);
    rejects(head('GET / HTTP/1.10', 'Host: a'), 400);
    rejects(head('GET / FTP/1.1', 'Host: a'), 400);
    rejects(head('GET  / HTTP/1.1', 'Host: a'), 400);
    rejects(head('GET /a b HTTP/1.1', 'Host: a'), 400);
    rejects(head('G(T / HTTP/1.1', 'Host: a'), 400);
    rejects(head('GET /\u007f HTTP/1.1', 'Host: a'), 400);
    rejects('', 400);
  });

  it('takes any token as a method and bytes beyond ASCII in the target, as node does', () => {
    assert.equal(parseRequestHead(head('BREW /pot HTTP/1.1', 'Host: a')).method, 'BREW');
    assert.equal(parseRequestHead(head('GET /caf\u00e9 HTTP/1.1', 'Host: a')).url, '/caf\u00e9');
  });
});
