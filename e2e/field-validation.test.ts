// Field validation as kubectl 1.27 and 1.33 meet it: `--validate=strict` (the default: kubectl
// sends fieldValidation=Strict), `warn` and `false`; wrong types, always refused; bodies kube-
// apiserver refuses before decoding them (not JSON, too large, too deep) leave the server serving.
//
// kubectl converts the manifest into an object before it sends it, so a key repeated in the
// file is gone (the last one wins) by the time the server reads the request; `kubectl create
// --raw -f` sends the file's bytes as they are, and then the server lists both kinds of problem.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, startKapi, type KapiProcess, type KubectlVersion } from './harness.js';

const ns = 'fv';

/** a ConfigMap manifest with two unknown fields and a repeated key */
const configMapYaml = (name: string): string => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${ns}
  labelz:
    app: x
dat:
  x: y
data:
  a: "1"
  a: "2"
`;

/** the same as JSON text, the repeated member kept */
const configMapJson = (name: string): string =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","namespace":"${ns}"},"data":{"a":"1","a":"2"},"dat":{"x":"y"}}`;

const deploymentYaml = (name: string, replicas: string): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: c
        image: nginx
`;

describe('field validation', () => {
  let kapi: KapiProcess;
  before(async () => {
    kapi = await startKapi();
    const r = await kapi.http.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    assert.equal(r.status, 201, r.body);
  });
  after(async () => {
    await kapi?.stop();
  });

  const getJson = async (path: string): Promise<Record<string, unknown>> => {
    const r = await kapi.http.get(path);
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Record<string, unknown>;
  };

  for (const version of ['1.27', '1.33'] as KubectlVersion[]) {
    describe(`kubectl ${version}`, () => {
      const v = version.replace('.', '');
      const k = (args: string[], input?: string) => kubectl(args, { kubeconfig: kapi.kubeconfig, version, input });

      it('create -f --validate=strict (and by default): 400 listing the unknown fields; the repeated key never reaches the server', async () => {
        for (const flags of [['--validate=strict'], [], ['--validate=true']]) {
          const r = await k(['create', '-f', '-', ...flags], configMapYaml(`strict-${v}`));
          assert.equal(r.code, 1, r.stdout);
          assert.equal(
            r.stderr,
            'Error from server (BadRequest): error when creating "STDIN": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dat", unknown field "metadata.labelz"\n',
          );
        }
        // what kubectl sent: its own YAML reading kept only the last `a`
        const traced = await k(['create', '-f', '-', '--validate=strict', '-v=8'], configMapYaml(`strict-${v}`));
        assert.match(traced.stderr, /fieldValidation=Strict/);
        assert.match(traced.stderr, /"data":\{"a":"2"\}/);
        const gone = await kapi.http.get(`/api/v1/namespaces/${ns}/configmaps/strict-${v}`);
        assert.equal(gone.status, 404);
      });

      it('create --raw -f (the bytes as they are) with fieldValidation=Strict: 400 listing the repeated and the unknown field', async () => {
        const r = await k(
          ['create', '--raw', `/api/v1/namespaces/${ns}/configmaps?fieldValidation=Strict`, '-f', '-'],
          configMapJson(`raw-${v}`),
        );
        assert.equal(r.code, 1, r.stdout);
        assert.equal(
          r.stderr,
          'Error from server (BadRequest): ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a", unknown field "dat"\n',
        );
        const warned = await k(
          ['create', '--raw', `/api/v1/namespaces/${ns}/configmaps?fieldValidation=Warn`, '-f', '-'],
          configMapJson(`raw-${v}`),
        );
        assert.equal(warned.code, 0, warned.stderr);
        assert.equal(warned.stderr, 'Warning: duplicate field "data.a"\nWarning: unknown field "dat"\n');
        const stored = await getJson(`/api/v1/namespaces/${ns}/configmaps/raw-${v}`);
        assert.deepEqual(stored.data, { a: '2' });
        assert.equal(stored.dat, undefined);
      });

      it('create --raw -f of a YAML file (sent as JSON): the 400 of a body that is not JSON', async () => {
        const yaml = configMapYaml(`yaml-raw-${v}`);
        const r = await k(['create', '--raw', `/api/v1/namespaces/${ns}/configmaps`, '-f', '-'], yaml);
        assert.equal(r.code, 1, r.stdout);
        const summary = `${Buffer.from(yaml).subarray(0, 30).toString('hex')} ...`;
        assert.equal(
          r.stderr,
          `Error from server (BadRequest): the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of value (${summary})\n`,
        );
      });

      it('create -f --validate=warn: created, one warning per unknown field, the fields dropped', async () => {
        const r = await k(['create', '-f', '-', '--validate=warn'], configMapYaml(`warn-${v}`));
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, `configmap/warn-${v} created\n`);
        assert.equal(r.stderr, 'Warning: unknown field "dat"\nWarning: unknown field "metadata.labelz"\n');
        const stored = await getJson(`/api/v1/namespaces/${ns}/configmaps/warn-${v}`);
        assert.deepEqual(stored.data, { a: '2' });
        assert.equal(stored.dat, undefined);
        assert.equal((stored.metadata as Record<string, unknown>).labelz, undefined);
      });

      it('create -f --validate=false: created silently, the fields dropped all the same', async () => {
        const r = await k(['create', '-f', '-', '--validate=false'], configMapYaml(`off-${v}`));
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, `configmap/off-${v} created\n`);
        assert.equal(r.stderr, '');
        const stored = await getJson(`/api/v1/namespaces/${ns}/configmaps/off-${v}`);
        assert.equal(stored.dat, undefined);
      });

      it('a wrong type is refused whatever the validation level', async () => {
        for (const flags of [[], ['--validate=warn'], ['--validate=false']]) {
          const r = await k(['create', '-f', '-', ...flags], deploymentYaml(`typed-${v}`, '"3"'));
          assert.equal(r.code, 1, r.stdout);
          assert.equal(
            r.stderr,
            'Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32\n',
          );
        }
      });

      it('replace refuses unknown fields; patch warns about them and drops them; a patch of the wrong type is a 422', async () => {
        const name = `patched-${v}`;
        const created = await k(['create', '-f', '-'], deploymentYaml(name, '1'));
        assert.equal(created.code, 0, created.stderr);
        const replaced = await k(
          ['replace', '-f', '-'],
          deploymentYaml(name, '2').replace('image: nginx', 'image: nginx\n        imagee: typo'),
        );
        assert.equal(replaced.code, 1, replaced.stdout);
        assert.equal(
          replaced.stderr,
          'Error from server (BadRequest): error when replacing "STDIN": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagee"\n',
        );

        const merged = await k(['patch', 'deploy', name, '-n', ns, '--type=merge', '-p', '{"spec":{"replicas":2,"paused2":true}}']);
        assert.equal(merged.code, 0, merged.stderr);
        assert.equal(merged.stderr, 'Warning: unknown field "spec.paused2"\n');
        assert.equal(merged.stdout, `deployment.apps/${name} patched\n`);
        const spec = (await getJson(`/apis/apps/v1/namespaces/${ns}/deployments/${name}`)).spec as Record<string, unknown>;
        assert.equal(spec.replicas, 2);
        assert.equal(spec.paused2, undefined);

        const strategic = await k(['patch', 'deploy', name, '-n', ns, '-p', '{"spec":{"replicas":"3"}}']);
        assert.equal(strategic.code, 1, strategic.stdout);
        assert.equal(
          strategic.stderr,
          'The request is invalid: patch: Invalid value: "map[spec:map[replicas:3]]": unrecognized type: int32\n',
        );
      });
    });
  }

  describe('bodies refused before or while decoding; the server keeps serving', () => {
    const configmaps = `/api/v1/namespaces/${ns}/configmaps`;

    it('YAML bodies: the repeated key with its line, the unknown fields in key order', async () => {
      const r = await kapi.http.post(`${configmaps}?fieldValidation=Strict`, configMapYaml('yaml-body'), {
        contentType: 'application/yaml',
      });
      assert.equal(r.status, 400, r.body);
      assert.equal(
        (JSON.parse(r.body) as { message: string }).message,
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 12: key "a" already set in map, unknown field "dat", unknown field "metadata.labelz"',
      );
      const warned = await kapi.http.post(configmaps, configMapYaml('yaml-body'), { contentType: 'application/yaml' });
      assert.equal(warned.status, 201, warned.body);
      // one header per warning (node joins repeated headers with ", ")
      assert.equal(
        warned.headers.warning,
        '299 - "line 12: key \\"a\\" already set in map", 299 - "unknown field \\"dat\\"", 299 - "unknown field \\"metadata.labelz\\""',
      );
    });

    it("YAML scalars as kube's go-yaml reads them: 0644 is octal, yes is true, a quoted value stays a string", async () => {
      const pod = [
        'apiVersion: v1',
        'kind: Pod',
        'metadata: {name: yaml-modes}',
        'spec:',
        '  containers: [{name: c, image: i}]',
        '  volumes:',
        '  - name: conf',
        '    configMap: {name: conf, defaultMode: 0644, optional: yes}',
        '',
      ].join('\n');
      const created = await kapi.http.post(`/api/v1/namespaces/${ns}/pods?dryRun=All`, pod, { contentType: 'application/yaml' });
      assert.equal(created.status, 201, created.body);
      const volume = (JSON.parse(created.body) as { spec: { volumes: { configMap: { defaultMode: number; optional: boolean } }[] } }).spec
        .volumes[0];
      assert.deepEqual(volume?.configMap, { name: 'conf', defaultMode: 420, optional: true });
      const refused = await kapi.http.post(
        configmaps,
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yaml-bool}\ndata: {enabled: on}\n',
        {
          contentType: 'application/yaml',
        },
      );
      assert.equal(refused.status, 400, refused.body);
      assert.match(
        (JSON.parse(refused.body) as { message: string }).message,
        /cannot unmarshal bool into Go struct field ConfigMap\.data of type string/,
      );
      const quoted = await kapi.http.post(
        `${configmaps}?dryRun=All`,
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yaml-quoted}\ndata: {enabled: "on", mode: "0644"}\n',
        {
          contentType: 'application/yaml',
        },
      );
      assert.equal(quoted.status, 201, quoted.body);
      assert.deepEqual((JSON.parse(quoted.body) as { data: unknown }).data, { enabled: 'on', mode: '0644' });
    });

    it('not JSON, not a served media type, over 3 MiB, nested past 10000 levels: 4xx Status each', async () => {
      const notJson = await kapi.http.post(configmaps, 'this is not JSON', { contentType: 'application/json' });
      assert.equal(notJson.status, 400, notJson.body);
      assert.equal((JSON.parse(notJson.body) as { kind: string; reason: string }).reason, 'BadRequest');
      assert.equal(
        (JSON.parse(notJson.body) as { message: string }).message,
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'h' in literal true (expecting 'r') (74686973206973206e6f74204a534f4e)",
      );

      const plain = await kapi.http.post(configmaps, 'data', { contentType: 'text/plain' });
      assert.equal(plain.status, 415, plain.body);
      assert.equal((JSON.parse(plain.body) as { reason: string }).reason, 'UnsupportedMediaType');

      const big = await kapi.http.post(configmaps, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'big' },
        data: { a: 'x'.repeat(3 * 1024 * 1024 + 1) },
      });
      assert.equal(big.status, 413, big.body.slice(0, 300));
      assert.deepEqual(JSON.parse(big.body), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Request entity too large: limit is 3145728',
        reason: 'RequestEntityTooLarge',
        code: 413,
      });

      const depth = 10001;
      const deep = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}}`;
      const tooDeep = await kapi.http.post(configmaps, deep);
      assert.equal(tooDeep.status, 400, tooDeep.body.slice(0, 300));
      assert.equal(
        (JSON.parse(tooDeep.body) as { message: string }).message,
        'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: invalid character \'{\' exceeded max depth ({"apiVersion":"v1","kind":"Con ...)',
      );
      const deepPatch = await kapi.http.patch(`${configmaps}/yaml-body`, `{"data":${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}}`);
      assert.equal(deepPatch.status, 400, deepPatch.body.slice(0, 300));

      const ready = await kapi.http.get('/readyz');
      assert.equal(ready.status, 200);
      const fine = await kapi.http.post(configmaps, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'after-all' },
        data: { ok: 'yes' },
      });
      assert.equal(fine.status, 201, fine.body);
    });
  });
});
