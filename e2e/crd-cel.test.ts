// x-kubernetes-validations with kubectl 1.33 against a kapi process on etcd: rules are
// type-checked against the schema and their cost estimated when the CRD is written (a rule
// naming a missing field, or one whose estimate is over budget, is refused with kube's 422
// text); rules over durations, sets, maps and escaped property names judge custom resources;
// set lists compare without order and map lists merge by key; a rule over the runtime
// per-call cost limit is cut off with kube's message; messageExpression is checked when the CRD
// is written and gives the message; oldSelf is refused below an atomic list; an item of a list
// of objects compares with null; url() reads Go's opaque form.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, startEtcd, startKapi, type EtcdProcess, type KapiProcess } from './harness.js';

function crd(plural: string, spec: string, rules: string): string {
  const indent = (s: string, n: number) =>
    s
      .trim()
      .split('\n')
      .map((l) => ' '.repeat(n) + l)
      .join('\n');
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.cel.example.com
spec:
  group: cel.example.com
  scope: Namespaced
  names: { plural: ${plural}, singular: ${plural.slice(0, -1)}, kind: ${plural[0]!.toUpperCase()}${plural.slice(1, -1)} }
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
${indent(spec, 14)}
            x-kubernetes-validations:
${indent(rules, 12)}
`;
}

describe('CRD validation rules: typed, costed, and run (kubectl 1.33)', () => {
  let etcd: EtcdProcess;
  let kapi: KapiProcess;
  const on = () => ({ kubeconfig: kapi.kubeconfig });

  before(async () => {
    etcd = await startEtcd();
    kapi = await startKapi({ etcdServers: etcd.endpoint });
  });
  after(async () => {
    await kapi?.stop();
    await etcd?.stop();
  });

  it("a rule naming a missing field is refused at create with cel-go's message", async () => {
    const r = await kubectl(['create', '-f', '-'], {
      ...on(),
      input: crd('missings', 'replicas: { type: integer }', '- rule: self.nosuch > 0'),
    });
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /The CustomResourceDefinition "missings.cel.example.com" is invalid: spec.versions\[0\].schema.openAPIV3Schema.properties\[spec\].x-kubernetes-validations\[0\].rule: Invalid value: apiextensions.ValidationRule\{Rule:"self.nosuch > 0", Message:"", MessageExpression:"", Reason:\(\*apiextensions.FieldValueErrorReason\)\(nil\), FieldPath:"", OptionalOldSelf:\(\*bool\)\(nil\)\}: compilation failed: ERROR: <input>:1:5: undefined field 'nosuch'/,
    );
    // a syntax error in ANTLR's words, as cel-go's parser reports it
    const unclosed = await kubectl(['create', '-f', '-'], {
      ...on(),
      input: crd('unclosed', 'replicas: { type: integer }', "- rule: 'self.replicas > (1'"),
    });
    assert.notEqual(unclosed.code, 0);
    assert.match(
      unclosed.stderr,
      /x-kubernetes-validations\[0\].rule: Invalid value: .*: compilation failed: ERROR: <input>:1:19: Syntax error: missing '\)' at '<EOF>'/,
    );
  });

  it("a rule over budget is refused at create with kube's factor", async () => {
    const r = await kubectl(['create', '-f', '-'], {
      ...on(),
      input: crd(
        'costlies',
        'names: { type: array, items: { type: string } }',
        '- rule: self.names.all(a, self.names.all(b, a.startsWith(b)))',
      ),
    });
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /x-kubernetes-validations\[0\].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)/,
    );
    assert.match(
      r.stderr,
      /spec.versions\[0\].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget/,
    );
  });

  it('rules on durations, sets, maps and escaped property names judge custom resources', async () => {
    const spec = `timeout: { type: string, format: duration }
tags: { type: array, maxItems: 10, x-kubernetes-list-type: set, items: { type: string, maxLength: 20 } }
limits: { type: object, maxProperties: 10, additionalProperties: { type: integer } }
max-surge: { type: integer }`;
    const rules = `- rule: "self.timeout <= duration('1h')"
  message: timeout at most an hour
- rule: "sets.contains(self.tags, ['a'])"
  message: tags must contain a
- rule: "self.limits.all(k, v, v <= 10 && k != 'x')"
  message: limits at most 10
- rule: "self.max__dash__surge < 5"
  message: max-surge below 5`;
    await kubectlOk(['create', '-f', '-'], { ...on(), input: crd('widgets', spec, rules) });
    await kubectlOk(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/widgets.cel.example.com'], on());
    const cr = (name: string, s: string) =>
      `apiVersion: cel.example.com/v1\nkind: Widget\nmetadata: { name: ${name}, namespace: default }\nspec: ${s}\n`;
    await kubectlOk(['create', '-f', '-'], {
      ...on(),
      input: cr('good', '{ timeout: 30m, tags: [b, a], limits: { cpu: 2 }, max-surge: 1 }'),
    });
    const bad = await kubectl(['create', '-f', '-'], {
      ...on(),
      input: cr('bad', '{ timeout: 2h, tags: [b], limits: { cpu: 20 }, max-surge: 9 }'),
    });
    assert.notEqual(bad.code, 0);
    for (const m of ['timeout at most an hour', 'tags must contain a', 'limits at most 10', 'max-surge below 5'])
      assert.match(bad.stderr, new RegExp(`spec: Invalid value: "object": ${m}`));
  });
  it('an item of a list of objects compares with null, as cel-go allows; url() reads as Go does', async () => {
    const spec = `items: { type: array, maxItems: 5, items: { type: object, properties: { name: { type: string, maxLength: 10 } } } }
endpoint: { type: string, maxLength: 50 }`;
    const rules = `- rule: "size(self.items) == 0 || self.items[0] != null"
  message: first item present
- rule: "!has(self.endpoint) || url(self.endpoint).getHost() == ''"
  message: endpoint without a host`;
    await kubectlOk(['create', '-f', '-'], { ...on(), input: crd('gadgets', spec, rules) });
    await kubectlOk(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/gadgets.cel.example.com'], on());
    const cr = (name: string, s: string) =>
      `apiVersion: cel.example.com/v1\nkind: Gadget\nmetadata: { name: ${name}, namespace: default }\nspec: ${s}\n`;
    // Go's net/url reads https:://x as opaque: no host
    await kubectlOk(['create', '-f', '-'], { ...on(), input: cr('good', "{ items: [{ name: a }], endpoint: 'https:://kubernetes.io/' }") });
    const bad = await kubectl(['create', '-f', '-'], { ...on(), input: cr('bad', "{ items: [], endpoint: 'https://kubernetes.io/' }") });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec: Invalid value: "object": endpoint without a host/);
  });
  it('set lists compare without order and map lists merge by key in rules', async () => {
    const spec = `tags: { type: array, maxItems: 10, x-kubernetes-list-type: set, items: { type: string, maxLength: 20 } }
ports:
  type: array
  maxItems: 10
  x-kubernetes-list-type: map
  x-kubernetes-list-map-keys: [name]
  items: { type: object, required: [name], properties: { name: { type: string, maxLength: 20 }, port: { type: integer } } }`;
    const rules = `- rule: "self.tags == oldSelf.tags"
  message: tags are immutable
- rule: "(oldSelf.ports + self.ports).size() == self.ports.size()"
  message: ports may not be removed`;
    await kubectlOk(['create', '-f', '-'], { ...on(), input: crd('keyeds', spec, rules) });
    await kubectlOk(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/keyeds.cel.example.com'], on());
    const cr = `apiVersion: cel.example.com/v1\nkind: Keyed\nmetadata: { name: k, namespace: default }\nspec: { tags: [a, b], ports: [{ name: http, port: 80 }, { name: x, port: 1 }] }\n`;
    await kubectlOk(['create', '-f', '-'], { ...on(), input: cr });
    const patch = (spec: unknown) =>
      kubectl(['patch', 'keyed', 'k', '-n', 'default', '--type=merge', '-p', JSON.stringify({ spec })], on());
    // the same set in another order is the same set
    assert.equal((await patch({ tags: ['b', 'a'] })).code, 0);
    const changed = await patch({ tags: ['b', 'c'] });
    assert.notEqual(changed.code, 0);
    assert.match(changed.stderr, /spec: Invalid value: "object": tags are immutable/);
    // the merge replaces elements by key: reordered, changed and added ports keep the size
    assert.equal(
      (
        await patch({
          ports: [
            { name: 'x', port: 2 },
            { name: 'http', port: 81 },
            { name: 'y', port: 3 },
          ],
        })
      ).code,
      0,
    );
    const removed = await patch({ ports: [{ name: 'http', port: 81 }] });
    assert.notEqual(removed.code, 0);
    assert.match(removed.stderr, /spec: Invalid value: "object": ports may not be removed/);
  });
  it('a rule within the static estimate but over the runtime per-call limit is cut off with kube message', async () => {
    const spec = 'nums: { type: array, maxItems: 1000, items: { type: integer } }';
    const rules = `- rule: "self.nums.all(a, self.nums.all(b, a != b || a == b))"
  message: pairs`;
    await kubectlOk(['create', '-f', '-'], { ...on(), input: crd('pairs', spec, rules) });
    await kubectlOk(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/pairs.cel.example.com'], on());
    const cr = (name: string, n: number) =>
      JSON.stringify({
        apiVersion: 'cel.example.com/v1',
        kind: 'Pair',
        metadata: { name, namespace: 'default' },
        spec: { nums: Array.from({ length: n }, (_, i) => i) },
      });
    await kubectlOk(['create', '-f', '-'], { ...on(), input: cr('few', 10) });
    const many = await kubectl(['create', '-f', '-'], { ...on(), input: cr('many', 1000) });
    assert.notEqual(many.code, 0);
    assert.match(
      many.stderr,
      /spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: pairs/,
    );
  });
  it('messageExpression is checked at create and gives the message; oldSelf is refused where values do not correlate', async () => {
    const badMessage = await kubectl(['create', '-f', '-'], {
      ...on(),
      input: crd(
        'badmessages',
        'name: { type: string, maxLength: 10 }',
        `- rule: "self.name != ''"\n  messageExpression: "self.name.size()"`,
      ),
    });
    assert.notEqual(badMessage.code, 0);
    assert.match(
      badMessage.stderr,
      /x-kubernetes-validations\[0\].messageExpression: Invalid value: apiextensions.ValidationRule\{Rule:"self.name != ''", Message:"", MessageExpression:"self.name.size\(\)".*: messageExpression must evaluate to a string/,
    );
    const uncorrelated = await kubectl(['create', '-f', '-'], {
      ...on(),
      input: crd(
        'uncorrelateds',
        'tags: { type: array, maxItems: 5, items: { type: string, maxLength: 5, x-kubernetes-validations: [{ rule: "self == oldSelf" }] } }',
        `- rule: "true"`,
      ),
    });
    assert.notEqual(uncorrelated.code, 0);
    assert.match(
      uncorrelated.stderr,
      /properties\[tags\].items.x-kubernetes-validations\[0\].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.versions\[0\].schema.openAPIV3Schema.properties\[spec\].properties\[tags\]/,
    );
    await kubectlOk(['create', '-f', '-'], {
      ...on(),
      input: crd(
        'messages',
        'name: { type: string, maxLength: 10 }',
        `- rule: "self.name.startsWith('a')"\n  messageExpression: "'name ' + self.name + ' must start with a'"`,
      ),
    });
    await kubectlOk(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/messages.cel.example.com'], on());
    const refused = await kubectl(['create', '-f', '-'], {
      ...on(),
      input: 'apiVersion: cel.example.com/v1\nkind: Message\nmetadata: { name: m, namespace: default }\nspec: { name: bob }\n',
    });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /spec: Invalid value: "object": name bob must start with a/);
  });
});
