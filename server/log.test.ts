import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, formatLine, setLogSink, setVerbosity } from './log.js';

test('a line is klog-shaped: severity, date, time, pid, component, message, fields', () => {
  const line = formatLine(
    'I',
    'pki',
    'created CA',
    { cert: '/x/ca.crt', n: 3, ok: true, skipped: undefined },
    new Date(2026, 10, 22, 1, 2, 3, 45),
  );
  assert.equal(line, `I1122 01:02:03.045000 ${String(process.pid).padStart(7)} pki] created CA cert="/x/ca.crt" n=3 ok=true`);
});

test('one event is one line, even with a multi-line message', () => {
  assert.doesNotMatch(formatLine('E', 'kapi', 'failed', { error: 'a\nb' }), /\n/);
});

test('v(n) prints only at verbosity n and above', (t) => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  t.after(() => {
    setLogSink(prev);
    setVerbosity(0);
  });
  const log = createLogger('test');
  setVerbosity(1);
  log.v(2).info('hidden');
  log.v(1).info('shown');
  log.warn('warned');
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /^I.* test\] shown$/);
  assert.match(lines[1]!, /^W.* test\] warned$/);
});
