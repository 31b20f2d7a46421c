import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuthorizerSession, AuthorizerValue } from './authorizer-library.js';
import { activation, bindVariables, compile, compileVariables, OUT_OF_BUDGET, variableFieldType } from './admission-policy.js';

const act = (object: unknown, extra: Partial<{ params: unknown; oldObject: unknown }> = {}) =>
  activation({
    object,
    oldObject: extra.oldObject ?? null,
    request: { operation: 'CREATE', userInfo: { username: 'alice', groups: ['g'] } },
    params: extra.params ?? null,
    namespaceObject: null,
  });

test('a validation over object with JSON integers as CEL ints', () => {
  const p = compile('object.spec.replicas <= 5', 'bool');
  assert.equal(p.compileError, undefined);
  assert.deepEqual(p.evaluate(act({ spec: { replicas: 6 } })), { ok: true, value: false });
  assert.deepEqual(p.evaluate(act({ spec: { replicas: 5 } })), { ok: true, value: true });
});

test('params, oldObject, request and matches (RE2) are available', () => {
  const p = compile(
    "object.spec.replicas <= int(params.data.max) && oldObject == null && request.userInfo.username.matches('^al')",
    'bool',
  );
  assert.deepEqual(p.evaluate(act({ spec: { replicas: 3 } }, { params: { data: { max: '3' } } })), { ok: true, value: true });
  assert.deepEqual(p.evaluate(act({ spec: { replicas: 4 } }, { params: { data: { max: '3' } } })), { ok: true, value: false });
});

test('compile errors and run-time errors are reported, not thrown', () => {
  const bad = compile('object.spec.replicas <=', 'bool');
  assert.match(bad.compileError ?? '', /^compilation error: /);
  assert.equal(bad.evaluate(act({})).ok, false);
  const missing = compile('object.spec.missing > 1', 'bool');
  const r = missing.evaluate(act({ spec: {} }));
  assert.equal(r.ok, false);
  assert.match((r as { error: string }).error, /^expression 'object.spec.missing > 1' resulted in error: /);
  const notBool = compile("'x'", 'bool');
  assert.match(notBool.compileError ?? '', /must evaluate to bool/);
});

test('variables are evaluated on first use, once, and can use each other', () => {
  const a = act({ spec: { replicas: 2, containers: [{ name: 'a' }, { name: 'b' }] } });
  let evaluations = 0;
  const names = compile('object.spec.containers.map(c, c.name)', 'any');
  const counted = { ...names, evaluate: (x: Parameters<typeof names.evaluate>[0]) => (evaluations++, names.evaluate(x)) };
  bindVariables(a, [
    { name: 'names', program: counted },
    { name: 'count', program: compile('size(variables.names)', 'any') },
    { name: 'broken', program: compile('object.nope.x', 'any') },
  ]);
  const p = compile("variables.count == 2 && 'b' in variables.names", 'bool');
  assert.deepEqual(p.evaluate(a), { ok: true, value: true });
  assert.equal(evaluations, 1);
  assert.equal(compile('variables.broken == 1', 'bool').evaluate(a).ok, false);
});

test("a variable is declared with its expression's type as kube converts it", () => {
  assert.equal(variableFieldType('string'), 'string');
  assert.equal(variableFieldType('google.protobuf.Duration'), 'google.protobuf.Duration');
  assert.equal(variableFieldType('list<list<int>>'), 'list<list<int>>');
  assert.equal(variableFieldType('map<string, list<Quantity>>'), 'map<string, list<dyn>>');
  assert.equal(variableFieldType('list'), 'list<dyn>');
  // objects, optionals and library types are dyn; so is a variable that does not compile
  assert.equal(variableFieldType('optional<int>'), 'dyn');
  assert.equal(variableFieldType('net.IP'), 'dyn');
  assert.equal(variableFieldType(undefined), 'dyn');
});

test('variables are typed by their expressions, in order; later expressions are checked against them', () => {
  const { programs, types } = compileVariables([
    { name: 'name', expression: 'string(object.metadata.name)' },
    { name: 'sizes', expression: '[size(variables.name)]' },
    { name: 'self', expression: 'variables.self' },
    { name: 'broken', expression: '1 +' },
  ]);
  assert.deepEqual(
    [...types],
    [
      ['name', 'string'],
      ['sizes', 'list<int>'],
      ['self', 'dyn'],
      ['broken', 'dyn'],
    ],
  );
  // a variable does not see itself
  assert.match(programs[2]!.program.compileError ?? '', /undefined field 'self'/);
  assert.equal(
    compile('variables.name + 1 > 0', 'bool', 'stored', 'validating', types).compileError,
    "compilation error: ERROR: <input>:1:16: found no matching overload for '_+_' applied to '(string, int)'\n | variables.name + 1 > 0\n | ...............^",
  );
  assert.equal(
    compile('variables.nosuch', 'bool', 'stored', 'validating', types).compileError,
    "compilation error: ERROR: <input>:1:10: undefined field 'nosuch'\n | variables.nosuch\n | .........^",
  );
  assert.match(
    compile("variables.sizes[0] == 'a'", 'bool', 'stored', 'validating', types).compileError ?? '',
    /'_==_' applied to '\(int, string\)'/,
  );
  // a variable that does not compile is dyn: what reads it compiles
  assert.equal(compile('variables.broken == 1', 'bool', 'stored', 'validating', types).compileError, undefined);
  // and the typed expressions run over the lazily bound variables
  const a = act({ metadata: { name: 'abc' } });
  bindVariables(a, programs);
  assert.deepEqual(
    compile("variables.name + 'd' == 'abcd' && variables.sizes[0] == 3", 'bool', 'stored', 'validating', types).evaluate(a),
    { ok: true, value: true },
  );
});

test('a hostile expression is cut off by the runtime budget', () => {
  const xs = Array.from({ length: 300 }, (_, i) => i);
  const p = compile('object.xs.all(a, object.xs.all(b, object.xs.all(c, a + b + c >= 0)))', 'bool');
  const r = p.evaluate(act({ xs }));
  assert.equal(r.ok, false);
  assert.match((r as { error: string }).error, /actual cost limit exceeded/);
});

test("Kubernetes' libraries: quantity, lists, regex, ip/cidr, url", () => {
  const obj = {
    spec: {
      containers: [
        { name: 'a', resources: { limits: { memory: '512Mi' } } },
        { name: 'b', resources: { limits: { memory: '2Gi' } } },
      ],
    },
  };
  const p = compile("object.spec.containers.all(c, quantity(c.resources.limits.memory).isLessThan(quantity('1Gi')))", 'bool');
  assert.equal(p.compileError, undefined);
  assert.deepEqual(p.evaluate(act(obj)), { ok: true, value: false });
  assert.deepEqual(compile("object.spec.containers.map(c, c.name).isSorted() && 'v1.2'.find('[0-9]+') == '1'", 'bool').evaluate(act(obj)), {
    ok: true,
    value: true,
  });
  assert.deepEqual(
    compile(
      "cidr('10.0.0.0/8').containsIP(object.ip) && url(object.url).getHost() == 'example.com' && !format.dns1123Label().validate(object.name).hasValue() && semver(object.v, true).major() == 1",
      'bool',
    ).evaluate(act({ ip: '10.2.3.4', url: 'https://example.com/x', name: 'web', v: 'v1.2' })),
    { ok: true, value: true },
  );
});

test('authorizer: checks are answered between attempts, once each, in validations and variables', async () => {
  const asked: string[] = [];
  const session = new AuthorizerSession({
    authorize: async (req) => {
      const ra = req.resourceAttributes ?? {};
      const na = req.nonResourceAttributes ?? {};
      asked.push(`${req.user.username} ${JSON.stringify(ra)}${JSON.stringify(na)}`);
      if (na['path'] === '/broken') throw new Error('webhook down');
      return { allowed: req.user.username === 'alice' && ra['resource'] === 'deployments', reason: 'because' };
    },
  });
  const a = activation({
    object: {},
    oldObject: null,
    request: {},
    params: null,
    namespaceObject: null,
    authorizer: new AuthorizerValue(session, { username: 'alice', groups: [] }),
  });
  bindVariables(a, [
    {
      name: 'canCreate',
      program: compile("authorizer.group('apps').resource('deployments').namespace('ns').check('create').allowed()", 'any'),
    },
  ]);
  const p = compile(
    "variables.canCreate && !authorizer.group('').resource('secrets').check('get').allowed() && authorizer.group('apps').resource('deployments').namespace('ns').check('create').reason() == 'because'",
    'bool',
  );
  assert.equal(p.compileError, undefined);
  assert.deepEqual(await p.evaluateAsync(a), { ok: true, value: true });
  assert.equal(asked.length, 2);
  const sa = compile("authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').check('create').allowed()", 'bool');
  assert.deepEqual(await sa.evaluateAsync(a), { ok: true, value: false });
  assert.match(asked[2]!, /^system:serviceaccount:ns:sa /);
  const errored = compile(
    "authorizer.path('/broken').check('get').errored() && authorizer.path('/broken').check('get').error() == 'webhook down'",
    'bool',
  );
  assert.deepEqual(await errored.evaluateAsync(a), { ok: true, value: true });
});

test('runtime cost in cel-go units: the per-expression limit and the shared budget of a binding', () => {
  const heavy = compile('object.items.all(a, object.items.all(b, object.items.all(c, a + b + c >= 0)))', 'bool');
  const items = Array.from({ length: 120 }, (_, i) => i);
  const r = heavy.evaluate(act({ items }));
  assert.deepEqual(r, {
    ok: false,
    error: `expression '${heavy.expression}' resulted in error: operation cancelled: actual cost limit exceeded`,
  });
  const light = compile('object.items.all(a, a >= 0)', 'bool');
  const shared = { ...act({ items }), budget: { remaining: 1000 } };
  assert.deepEqual(light.evaluate(shared), { ok: true, value: true });
  assert.ok(shared.budget.remaining < 1000 && shared.budget.remaining > 0);
  // the second evaluation does not fit what is left
  assert.deepEqual(light.evaluate(shared), { ok: false, error: OUT_OF_BUDGET, outOfBudget: true });
  assert.equal(light.evaluate(shared).ok, false);
});

test('compile errors point into the expression as written, after matches and message constructions', () => {
  const at = (expr: string, flavour: 'validating' | 'mutating' = 'validating') =>
    (compile(expr, 'any', 'new', flavour).compileError ?? '').split('\n')[0];
  assert.equal(
    at("'a'.matches('x') && 1 + 'a' == 2"),
    "compilation error: ERROR: <input>:1:23: found no matching overload for '_+_' applied to '(int, string)'",
  );
  assert.equal(
    at('[JSONPatch{op: "add", path: "/a", value: 1 + "a"}]', 'mutating'),
    "compilation error: ERROR: <input>:1:44: found no matching overload for '_+_' applied to '(int, string)'",
  );
  assert.equal(
    at('Object{spec: Object.spec{replicas: nosuch}}', 'mutating'),
    "compilation error: ERROR: <input>:1:36: undeclared reference to 'nosuch' (in container '')",
  );
  // an optional field's value must be an optional: reported at the field's colon, as cel-go does
  assert.equal(
    at('[JSONPatch{op: "add", ?path: "/a"}]', 'mutating'),
    "compilation error: ERROR: <input>:1:28: expected type of field 'path' is 'optional_type(string)' but provided type is 'string'",
  );
});

test('optional fields of a message construction are set only when the optional has a value', () => {
  const p = compile(
    'Object{spec: Object.spec{?replicas: optional.none(), ?paused: optional.of(true), ?minReadySeconds: object.?spec.?x}}',
    'any',
    'new',
    'mutating',
  );
  assert.equal(p.compileError, undefined);
  const r = p.evaluate(act({ spec: { x: 5 } }));
  assert.equal(r.ok, true);
  const spec = (r as { value: { fields: { spec: { fields: Record<string, unknown> } } } }).value.fields.spec.fields;
  assert.deepEqual(spec, { paused: true, minReadySeconds: 5n });
});
