import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rewriteMessageLiterals, rewriteMessageLiteralsSource, tokenize } from './message-literals.js';

test('message construction becomes a call with string keys and dyn values', () => {
  assert.equal(
    rewriteMessageLiterals('[JSONPatch{op: "add", path: "/a", value: 1}]'),
    '[__kapi_message("JSONPatch", {"op": dyn("add"), "path": dyn("/a"), "value": dyn(1)})]',
  );
  assert.equal(
    rewriteMessageLiterals('Object{metadata: Object.metadata{labels: {"a": "b"}}}'),
    '__kapi_message("Object", {"metadata": dyn(__kapi_message("Object.metadata", {"labels": dyn({"a": "b"})}))})',
  );
  assert.equal(rewriteMessageLiterals('Object{}'), '__kapi_message("Object", {})');
});

test('strings, comments, maps and field selections are left alone', () => {
  for (const e of ['"Object{a: 1}"', "r'x{y: 1}'", 'object.spec', '{"a": 1}', 'x in {"a": 1}', '// Object{a: 1}\ntrue', '1.5 + 2e3']) {
    assert.equal(rewriteMessageLiterals(e), e);
  }
});

test('tokens skip string literals whole, triple-quoted ones too', () => {
  assert.deepEqual(
    tokenize('"""a{b:"""+x').map((t) => t.text),
    ['"""a{b:"""', '+', 'x'],
  );
});

test('optional fields become calls that keep the field only when set; offsets map back', () => {
  const src = 'JSONPatch{op: "add", ?path: p}';
  const r = rewriteMessageLiteralsSource(src);
  assert.equal(r.text, '__kapi_message("JSONPatch", {"op": dyn("add"), "path": __kapi_optional_field("JSONPatch", "path", p)})');
  // the value `p` maps to itself; the inserted call to the field's colon
  assert.equal(r.toOriginal(r.text.indexOf('p)')), src.indexOf('p}'));
  assert.equal(r.toOriginal(r.text.indexOf('__kapi_optional_field')), src.indexOf(': p'));
  assert.equal(r.toOriginal(r.text.indexOf('dyn("add")') + 4), src.indexOf('"add"'));
  assert.equal(r.toOriginal(r.text.indexOf('__kapi_message')), src.indexOf('{'));
});
