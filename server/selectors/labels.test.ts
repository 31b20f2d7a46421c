import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  labelSelectorFromObject,
  LabelSelector,
  parseLabelSelector,
  parseLabelSelectorOrBadRequest,
  SelectorError,
  validateLabelSelectorObject,
} from './labels.js';
import { StatusError } from '../machinery/status.js';

function parseError(s: string): string {
  try {
    parseLabelSelector(s);
  } catch (e) {
    assert.ok(e instanceof SelectorError, `not a SelectorError: ${String(e)}`);
    return e.message;
  }
  assert.fail(`parsed without error: ${s}`);
}

test('equality, inequality and set operators match as kube-apiserver does', () => {
  const labels = { app: 'web', tier: 'front', n: '5' };
  const cases: [string, boolean][] = [
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (web,db)', true],
    ['app in (db)', false],
    ['app notin (db)', true],
    ['missing notin (db)', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['n>4', true],
    ['n<4', false],
    ['app>4', false],
    ['  app = web  ', true],
    ['', true],
  ];
  for (const [sel, want] of cases) assert.equal(parseLabelSelector(sel).matches(labels), want, sel);
});

test('empty value forms: a=, a in (), a in (,x)', () => {
  assert.equal(parseLabelSelector('a=').matches({ a: '' }), true);
  assert.equal(parseLabelSelector('a=').matches({}), false);
  assert.equal(parseLabelSelector('a in ()').matches({ a: '' }), true);
  assert.deepEqual(parseLabelSelector('a in (,x)').requirements[0].values, ['', 'x']);
  assert.deepEqual(parseLabelSelector('a in (x,,y)').requirements[0].values, ['', 'x', 'y']);
});

test('in/notin are plain words in value position', () => {
  assert.equal(parseLabelSelector('a=in').matches({ a: 'in' }), true);
  assert.equal(parseLabelSelector('a in (notin,in)').matches({ a: 'notin' }), true);
});

test('requirements are sorted by key and print canonically', () => {
  const s = parseLabelSelector('z=1,a in (c,b),!m,k');
  assert.equal(s.toString(), 'a in (b,c),k,!m,z=1');
  assert.equal(s.requiresExactMatch('z'), '1');
  assert.equal(s.requiresExactMatch('a'), undefined);
});

test('syntax errors carry kube-apiserver messages', () => {
  assert.equal(parseError('a b'), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  assert.equal(parseError('a=b c'), "found 'c', expected: ',' or 'end of string'");
  assert.equal(parseError('a=b,'), "found '', expected: identifier after ','");
  assert.equal(parseError(',a'), "found ',', expected: !, identifier, or 'end of string'");
  assert.equal(parseError('a in b'), "unable to parse requirement: found 'b' expected: '('");
  assert.equal(parseError('a in (b'), "unable to parse requirement: found '', expected: ',' or ')'");
  assert.equal(parseError('a=(b)'), "unable to parse requirement: found '(', expected: identifier");
  assert.equal(parseError('!'), "unable to parse requirement: found '', expected: identifier");
});

test('invalid keys and values are reported with their field paths', () => {
  assert.equal(
    parseError('a$b=c'),
    "unable to parse requirement: <nil>: Invalid value: \"a$b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  );
  assert.equal(
    parseError('a=b$'),
    "unable to parse requirement: values[0][a]: Invalid value: \"b$\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  );
  assert.match(
    parseError('a>b'),
    /^unable to parse requirement: values\[0\]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer$/,
  );
  assert.match(parseError(`a=${'x'.repeat(64)}`), /must be no more than 63 characters/);
});

test('the 400 form is a BadRequest StatusError', () => {
  assert.equal(parseLabelSelectorOrBadRequest(undefined), LabelSelector.everything);
  try {
    parseLabelSelectorOrBadRequest('a b');
    assert.fail('no error');
  } catch (e) {
    assert.ok(e instanceof StatusError);
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
  }
});

test('metav1.LabelSelector objects: nil selects nothing, empty everything', () => {
  assert.equal(labelSelectorFromObject(null).matches({ a: 'b' }), false);
  assert.equal(labelSelectorFromObject({}).matches({ a: 'b' }), true);
  const s = labelSelectorFromObject({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['front', 'mid'] },
      { key: 'legacy', operator: 'DoesNotExist' },
      { key: 'env', operator: 'Exists' },
      { key: 'zone', operator: 'NotIn', values: ['x'] },
    ],
  });
  assert.equal(s.matches({ app: 'web', tier: 'mid', env: 'p' }), true);
  assert.equal(s.matches({ app: 'web', tier: 'mid', env: 'p', legacy: '1' }), false);
  assert.equal(s.matches({ app: 'web', tier: 'mid', env: 'p', zone: 'x' }), false);
  assert.equal(s.toString(), 'app=web,env,!legacy,tier in (front,mid),zone notin (x)');
  assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }), {
    message: '"Bogus" is not a valid label selector operator',
  });
});

test('validation of LabelSelector objects names the field', () => {
  const errs = validateLabelSelectorObject(
    {
      matchLabels: { 'bad key': 'v' },
      matchExpressions: [
        { key: 'a', operator: 'In' },
        { key: 'b', operator: 'Exists', values: ['x'] },
      ],
    },
    'spec.selector',
  );
  assert.deepEqual(
    errs.map((e) => [e.type, e.field]),
    [
      ['FieldValueInvalid', 'spec.selector.matchLabels'],
      ['FieldValueRequired', 'spec.selector.matchExpressions[0].values'],
      ['FieldValueForbidden', 'spec.selector.matchExpressions[1].values'],
    ],
  );
});
