import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { aggregate, decodeAuthenticationConfiguration, jwtFromOidcFlags, validateAuthenticationConfiguration } from './config.js';
import { compileExpression, routeMatchesToRe2, stringList, usesClaim } from './cel.js';

const header = 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n';

function errorsOf(yaml: string, disallowed: string[] = ['https://kubernetes.default.svc.cluster.local']): string {
  return aggregate(validateAuthenticationConfiguration(decodeAuthenticationConfiguration(header + yaml), disallowed));
}

describe('AuthenticationConfiguration', () => {
  it('decodes v1alpha1, v1beta1 and v1 strictly', () => {
    for (const v of ['v1alpha1', 'v1beta1', 'v1']) {
      const c = decodeAuthenticationConfiguration(`apiVersion: apiserver.config.k8s.io/${v}\nkind: AuthenticationConfiguration\njwt: []\n`);
      assert.deepEqual(c, { jwt: [] });
    }
    assert.throws(
      () => decodeAuthenticationConfiguration(header + 'jwt:\n- issuer: {url: https://a, audiences: [x], bogus: 1}\n'),
      /strict decoding error: unknown field "jwt\[0\].issuer.bogus"/,
    );
    assert.throws(() => decodeAuthenticationConfiguration('apiVersion: v1\nkind: Pod\n'), /no kind "Pod" is registered for version "v1"/);
    assert.throws(() => decodeAuthenticationConfiguration(''), /empty config data/);
  });

  it('accepts a full valid configuration', () => {
    const errs = errorsOf(`
jwt:
- issuer:
    url: https://issuer.example.com
    audiences: [a, b]
    audienceMatchPolicy: MatchAny
  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: 'claims.exp - claims.iat <= 3600'
    message: too long
  claimMappings:
    username:
      expression: 'claims.email_verified ? claims.email : claims.sub'
    groups:
      claim: groups
      prefix: ''
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: 'claims.?tenant.orValue("none")'
  userValidationRules:
  - expression: '!user.username.startsWith("system:")'
    message: no system users
anonymous:
  enabled: true
  conditions:
  - path: /livez
`);
    assert.equal(errs, '');
  });

  it("reports kube-apiserver's field errors", () => {
    assert.equal(
      errorsOf('jwt:\n- issuer: {url: "http://x", audiences: [a]}\n  claimMappings: {username: {claim: sub}}\n'),
      '[jwt[0].issuer.url: Invalid value: "http://x": URL scheme must be https, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]',
    );
    assert.equal(
      errorsOf(
        'jwt:\n- issuer: {url: "https://kubernetes.default.svc.cluster.local", audiences: [a, b]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n',
      ),
      '[jwt[0].issuer.url: Invalid value: "https://kubernetes.default.svc.cluster.local": URL must not overlap with disallowed issuers: [https://kubernetes.default.svc.cluster.local], jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences]',
    );
    assert.equal(
      errorsOf('jwt:\n- issuer: {url: "https://a", audiences: [x]}\n  claimMappings: {username: {expression: "claims.email"}}\n'),
      'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
    );
    assert.match(
      errorsOf('jwt:\n- issuer: {url: "https://a", audiences: [x]}\n  claimMappings: {username: {expression: "claims.("}}\n'),
      /jwt\[0\].claimMappings.username.expression: Invalid value: "claims.\(": compilation failed/,
    );
    assert.equal(
      errorsOf(
        'jwt:\n- issuer: {url: "https://a", audiences: [x]}\n  claimMappings:\n    username: {claim: sub, prefix: ""}\n    extra: [{key: "kubernetes.io/x", valueExpression: "claims.sub"}]\n',
      ),
      'jwt[0].claimMappings.extra[0].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use',
    );
    assert.equal(errorsOf('jwt: []\nanonymous: {enabled: false, conditions: [{path: /livez}]}\n').split(':')[0], 'anonymous.conditions');
    assert.equal(
      errorsOf(
        'jwt:\n- issuer: {url: "https://a", audiences: [x]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n- issuer: {url: "https://a", audiences: [x]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n',
      ),
      'jwt[1].issuer.url: Duplicate value: "https://a"',
    );
  });

  it('turns the --oidc-* flags into a JWT authenticator as kube-apiserver does', () => {
    const base = {
      issuerURL: 'https://i',
      clientID: 'c',
      caPem: '',
      usernameClaim: 'sub',
      usernamePrefix: '',
      groupsClaim: '',
      groupsPrefix: '',
      requiredClaims: {},
    };
    assert.equal(jwtFromOidcFlags(base).claimMappings.username.prefix, 'https://i#');
    assert.equal(jwtFromOidcFlags({ ...base, usernameClaim: 'email' }).claimMappings.username.prefix, '');
    assert.equal(jwtFromOidcFlags({ ...base, usernamePrefix: '-' }).claimMappings.username.prefix, '');
    assert.equal(jwtFromOidcFlags({ ...base, usernamePrefix: 'oidc:' }).claimMappings.username.prefix, 'oidc:');
    const full = jwtFromOidcFlags({ ...base, groupsClaim: 'groups', groupsPrefix: 'g:', requiredClaims: { hd: 'x' } });
    assert.deepEqual(full.claimMappings.groups, { claim: 'groups', prefix: 'g:' });
    assert.deepEqual(full.claimValidationRules, [{ claim: 'hd', requiredValue: 'x' }]);
    assert.deepEqual(full.issuer.audiences, ['c']);
  });
});

describe('CEL for claims and users', () => {
  it('evaluates over claims with JSON integers as ints, optionals and RE2 matches', () => {
    assert.equal(compileExpression('claims', 'claims.exp - claims.iat <= 3600').evaluate({ exp: 1000, iat: 0 }), true);
    assert.equal(compileExpression('claims', 'claims.?tenant.orValue("none")').evaluate({}), 'none');
    assert.equal(compileExpression('claims', 'claims.sub.matches("^user-[0-9]+$")').evaluate({ sub: 'user-42' }), true);
    assert.equal(compileExpression('claims', 'matches(claims.sub, "x")').evaluate({ sub: 'axb' }), true);
    assert.deepEqual(stringList(compileExpression('claims', 'claims.groups.map(g, "p:" + g)').evaluate({ groups: ['a', 'b'] })), [
      'p:a',
      'p:b',
    ]);
    assert.equal(
      compileExpression('user', 'user.groups.exists(g, g == "a")').evaluate({ username: 'u', uid: '', groups: ['a'], extra: {} }),
      true,
    );
    assert.throws(() => stringList(5n), /must return a string or a list of strings/);
  });
  it('routes matches to RE2 outside strings only, and finds email claims', () => {
    assert.equal(routeMatchesToRe2('a.matches("matches(")'), 'a.kapiRe2Matches("matches(")');
    assert.equal(routeMatchesToRe2('rematches(x)'), 'rematches(x)');
    assert.ok(usesClaim('claims.email', 'email'));
    assert.ok(!usesClaim('claims.email_verified', 'email'));
    assert.ok(usesClaim('claims.?email_verified.orValue(false)', 'email_verified'));
  });
});

describe('CEL in the authentication configuration', () => {
  it('claims is a map of dyn and user is kube UserInfo: fields are type-checked', () => {
    assert.equal(compileExpression('claims', "claims.sub + '@' + claims.iss").evaluate({ sub: 'a', iss: 'b' }), 'a@b');
    assert.equal(
      compileExpression('user', "user.username.startsWith('system:') || user.groups.exists(g, g == 'x') || 'k' in user.extra").evaluate({
        username: 'u',
        groups: ['x'],
        extra: {},
      }),
      true,
    );
    assert.throws(
      () => compileExpression('user', 'user.nosuch'),
      (err: Error) => err.message === "compilation failed: ERROR: <input>:1:5: undefined field 'nosuch'\n | user.nosuch\n | ....^",
    );
    assert.throws(
      () => compileExpression('user', 'user.groups == "x"'),
      /found no matching overload for '_==_' applied to '\(list\(string\), string\)'/,
    );
  });
});
