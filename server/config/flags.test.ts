import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_SPECS, FlagError, parseKapiFlags, type KapiConfig } from './flags.js';
import { KUBE_APISERVER_1_33_FLAGS } from './kube-apiserver-flags-1.33.js';

function parse(...argv: string[]): KapiConfig {
  const out = parseKapiFlags(argv, '/srv/kapi');
  assert.equal(out.kind, 'config');
  return (out as { kind: 'config'; config: KapiConfig }).config;
}

test("defaults are kube-apiserver's (and kapi's own for data-dir)", () => {
  const c = parse();
  assert.equal(c.serving.securePort, 6443);
  assert.equal(c.serving.bindAddress, '0.0.0.0');
  assert.equal(c.serving.advertiseAddress, '');
  assert.equal(c.etcd.prefix, '/registry');
  assert.deepEqual(c.etcd.servers, []);
  assert.equal(c.etcd.compactionIntervalMs, 5 * 60_000);
  assert.equal(c.dataDir, '/srv/kapi/data');
  assert.equal(c.serving.certDir, '/srv/kapi/data/pki');
  assert.equal(c.kubernetesServiceIP, '10.96.0.1');
  assert.equal(c.livezGracePeriodMs, 0);
  assert.equal(c.shutdownDelayMs, 0);
  assert.deepEqual(c.values.get('authorization-mode'), ['AlwaysAllow']);
  assert.equal(c.values.get('anonymous-auth'), true);
  assert.equal(c.values.get('min-request-timeout'), 1800);
  assert.equal(c.explicitlySet.size, 0);
});

test('--name=value and --name value both work', () => {
  const c = parse('--secure-port=7443', '--bind-address', '127.0.0.1', '--etcd-prefix', '/kapi', '--data-dir=/tmp/x');
  assert.equal(c.serving.securePort, 7443);
  assert.equal(c.serving.bindAddress, '127.0.0.1');
  assert.equal(c.etcd.prefix, '/kapi');
  assert.equal(c.dataDir, '/tmp/x');
  assert.equal(c.serving.certDir, '/tmp/x/pki');
  assert.ok(c.explicitlySet.has('secure-port'));
});

test('relative paths resolve against the working directory; --cert-dir overrides <data-dir>/pki', () => {
  const c = parse('--data-dir', 'd', '--cert-dir', 'certs', '--tls-cert-file', 'a.crt', '--tls-private-key-file', 'a.key');
  assert.equal(c.dataDir, '/srv/kapi/d');
  assert.equal(c.serving.certDir, '/srv/kapi/certs');
  assert.equal(c.serving.tlsCertFile, '/srv/kapi/a.crt');
});

test('booleans: bare, =true, =false; a bare boolean never eats the next argument', () => {
  assert.equal(parse('--allow-privileged').values.get('allow-privileged'), true);
  assert.equal(parse('--anonymous-auth=false').values.get('anonymous-auth'), false);
  assert.equal(parse('--watch-cache=0').values.get('watch-cache'), false);
  assert.throws(() => parse('--allow-privileged', 'false'), /does not take any arguments, got \["false"\]/);
  assert.throws(() => parse('--anonymous-auth=maybe'), /invalid argument "maybe" for "--anonymous-auth" flag/);
});

test('lists: commas split, the first use replaces the default, later uses append', () => {
  const c = parse('--etcd-servers=http://127.0.0.1:1,http://127.0.0.1:2', '--etcd-servers', 'http://127.0.0.1:3');
  assert.deepEqual(c.etcd.servers, ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3']);
  assert.deepEqual(parse('--authorization-mode=RBAC,AlwaysAllow').values.get('authorization-mode'), ['RBAC', 'AlwaysAllow']);
  // string arrays keep commas and repeat
  const sa = parse('--service-account-key-file=a.pem', '--service-account-key-file=b,c.pem');
  assert.deepEqual(sa.values.get('service-account-key-file'), ['a.pem', 'b,c.pem']);
});

test('maps: runtime-config merges across uses; feature-gates add up and are checked', () => {
  const c = parse(
    '--runtime-config=api/all=true,batch/v1=false',
    '--runtime-config',
    'api/alpha',
    '--feature-gates=WatchList=false,CBORServingAndStorage=true',
    '--feature-gates=APIResponseCompression=false',
  );
  assert.deepEqual(c.runtimeConfig, { 'api/all': 'true', 'batch/v1': 'false', 'api/alpha': 'true' });
  assert.equal(c.featureGates.enabled('WatchList'), false);
  assert.equal(c.featureGates.enabled('CBORServingAndStorage'), true);
  assert.equal(c.featureGates.enabled('APIResponseCompression'), false);
  assert.throws(() => parse('--feature-gates=WatchList=yes'), {
    message: 'invalid value of WatchList=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
  });
  assert.throws(() => parse('--feature-gates=NoSuchGate=true'), { message: 'unrecognized feature gate: NoSuchGate' });
});

test('durations use Go syntax', () => {
  const c = parse('--etcd-compaction-interval=0', '--livez-grace-period=30s', '--shutdown-delay-duration', '1m30s');
  assert.equal(c.etcd.compactionIntervalMs, 0);
  assert.equal(c.livezGracePeriodMs, 30_000);
  assert.equal(c.shutdownDelayMs, 90_000);
  assert.throws(() => parse('--livez-grace-period=10'), /invalid argument "10" for "--livez-grace-period" flag: time: missing unit/);
  assert.throws(() => parse('--shutdown-delay-duration=-1s'), /can not be a negative value/);
});

test('-v shorthand in every pflag spelling, and --v', () => {
  assert.equal(parse('-v', '4').verbosity, 4);
  assert.equal(parse('-v=3').verbosity, 3);
  assert.equal(parse('-v2').verbosity, 2);
  assert.equal(parse('--v=5').verbosity, 5);
});

test('underscores are dashes, as kube-apiserver normalises them', () => {
  assert.equal(parse('--secure_port=9443').serving.securePort, 9443);
});

test("unknown flags and stray arguments fail with kube-apiserver's wording", () => {
  assert.throws(
    () => parse('--no-such-flag'),
    (e: unknown) => e instanceof FlagError && e.message === 'unknown flag: --no-such-flag',
  );
  assert.throws(() => parse('--no-such-flag=1'), /^FlagError: unknown flag: --no-such-flag$/);
  assert.throws(() => parse('-x'), /unknown shorthand flag: 'x' in -x/);
  assert.throws(() => parse('--secure-port'), /flag needs an argument: --secure-port/);
  assert.throws(() => parse('serve'), /does not take any arguments/);
  assert.throws(() => parse('--secure-port=abc'), /invalid argument "abc" for "--secure-port" flag/);
});

test('validation of values', () => {
  assert.throws(() => parse('--secure-port=0'), /must be between 1 and 65535/);
  assert.throws(() => parse('--bind-address=localhost'), /--bind-address/);
  assert.throws(() => parse('--tls-cert-file=a.crt'), /must be given together/);
  assert.throws(() => parse('--storage-backend=etcd2'), /allowed values: etcd3/);
  assert.throws(() => parse('--service-cluster-ip-range=10.0.0.0'), /--service-cluster-ip-range/);
  assert.throws(() => parse('--etcd-servers=127.0.0.1:2379'), /--etcd-servers/);
  assert.throws(() => parse('--endpoint-reconciler-type=static'), /unknown reconciler type "static"/);
  assert.throws(() => parse('--delete-collection-workers=0'), /--delete-collection-workers must be greater than 0/);
  assert.throws(() => parse('--workers=-1'), /--workers must be 0 \(one per CPU core\) or a positive number/);
  assert.equal(parse().values.get('workers'), 1);
  assert.equal(parse('--workers=0').values.get('workers'), 0);
  assert.equal(parse('--endpoint-reconciler-type=none').values.get('endpoint-reconciler-type'), 'none');
  assert.equal(parse('--storage-backend=etcd3').values.get('storage-backend'), 'etcd3');
});

test('service CIDR: the first address is the kubernetes Service IP; dual stack accepted', () => {
  assert.equal(parse('--service-cluster-ip-range=10.0.0.0/24').kubernetesServiceIP, '10.0.0.1');
  const dual = parse('--service-cluster-ip-range=10.0.0.0/16,fd00:10:96::/108');
  assert.equal(dual.kubernetesServiceIP, '10.0.0.1');
  assert.equal(dual.serviceClusterIPRanges[1]!.family, 6);
  assert.throws(() => parse('--service-cluster-ip-range=10.0.0.0/16,10.1.0.0/16'), /different IP families/);
});

test('node port range: N-M, N+M or N; default 30000-32767', () => {
  assert.deepEqual(parse().serviceNodePortRange, { base: 30000, size: 2768 });
  assert.deepEqual(parse('--service-node-port-range=20000+99').serviceNodePortRange, { base: 20000, size: 100 });
  assert.throws(() => parse('--service-node-port-range=32767-30000'), /--service-node-port-range/);
});

test("the harness flags of kubectl's and client libraries' test suites are accepted", () => {
  const c = parse(
    '--bind-address=127.0.0.1',
    '--authorization-mode=RBAC,AlwaysAllow',
    '--secure-port=6443',
    '--feature-gates=AllAlpha=false',
    '--client-ca-file=ca.crt',
    '--token-auth-file=tokens.csv',
    '--etcd-servers=http://127.0.0.1:2379',
    '--runtime-config=api/all=true',
    '--cert-dir=/tmp',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--service-account-key-file=sa.pub',
    '--service-account-signing-key-file=sa.key',
    '--service-account-issuer=https://kubernetes.default.svc',
    '--enable-admission-plugins=NamespaceLifecycle',
    '--disable-admission-plugins=ServiceAccount',
    '--allow-privileged=true',
    '--storage-media-type=application/json',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    '--requestheader-client-ca-file=rh.crt',
    '--requestheader-allowed-names=front-proxy',
    '--oidc-issuer-url=https://x',
    '--oidc-client-id=c',
    '--authentication-config=a.yaml',
    '--watch-cache=true',
    '--watch-cache-sizes=pods#100',
    '--max-requests-inflight=0',
    '--max-mutating-requests-inflight=0',
    '--request-timeout=30s',
    '--min-request-timeout=300',
    '--anonymous-auth=false',
    '--enable-bootstrap-token-auth',
    '--v=2',
    '--kubeconfig=/dev/null',
  );
  assert.equal(c.serving.clientCaFile, '/srv/kapi/ca.crt');
  assert.equal(c.serving.certDir, '/tmp');
  assert.deepEqual(c.values.get('service-account-issuer'), ['https://kubernetes.default.svc']);
});

test('--help lists every flag with its default, grouped', () => {
  const out = parseKapiFlags(['--help']);
  assert.equal(out.kind, 'help');
  const text = (out as { text: string }).text;
  for (const s of FLAG_SPECS) assert.match(text, new RegExp(`--${s.name}\\b`), s.name);
  assert.match(text, /Etcd flags:/);
  assert.match(text, /--secure-port int\s+.*\(default 6443\)/);
  assert.match(text, /--etcd-compaction-interval duration\s+.*\(default 5m0s\)/);
  assert.match(text, /--etcd-prefix string\s+.*\(default "\/registry"\)/);
  assert.equal(parseKapiFlags(['-h']).kind, 'help');
  assert.equal(parseKapiFlags(['--version']).kind, 'version');
});

test("deprecated flags carry pflag's notice, once per use", () => {
  const config = parse('--apiserver-count=3', '--admission-control=AlwaysAdmit', '--apiserver-count', '2', '--event-ttl=1h');
  assert.deepEqual(config.flagDeprecationNotices, [
    'Flag --apiserver-count has been deprecated, apiserver-count is deprecated and will be removed in a future version.',
    'Flag --admission-control has been deprecated, Use --enable-admission-plugins or --disable-admission-plugins instead. Will be removed in a future version.',
    'Flag --apiserver-count has been deprecated, apiserver-count is deprecated and will be removed in a future version.',
  ]);
  assert.deepEqual(parse().flagDeprecationNotices, []);
});

test("every kube-apiserver 1.33 flag is accepted; the only others are kapi's own", () => {
  const ours = new Set<string>(FLAG_SPECS.map((s) => s.name));
  assert.deepEqual(
    KUBE_APISERVER_1_33_FLAGS.filter((name) => !ours.has(name)),
    [],
  );
  const kube = new Set(KUBE_APISERVER_1_33_FLAGS);
  assert.deepEqual([...ours].filter((name) => !kube.has(name)).sort(), [
    'allow-loopback-proxy-targets',
    'data-dir',
    'encoded-item-cache-mib',
    'kubeconfig',
    'max-inflight-body-mib',
    'max-unread-response-mib',
    'replica-response-header',
    'tls-san',
    'workers',
  ]);
  // each one parses with a value of its kind
  for (const spec of FLAG_SPECS) {
    if (spec.name === 'help' || spec.name === 'version') continue;
    if (spec.kind === 'duration') parse(`--${spec.name}=1s`);
    else if (spec.kind === 'bool') parse(`--${spec.name}=true`);
    else if (typeof spec.default !== 'object') parse(`--${spec.name}=${String(spec.default)}`);
  }
});

test('--show-hidden-metrics-for-version takes the previous minor release only', () => {
  assert.equal(parse('--show-hidden-metrics-for-version=1.32').values.get('show-hidden-metrics-for-version'), '1.32');
  assert.throws(
    () => parse('--show-hidden-metrics-for-version=1.31'),
    (e: unknown) =>
      e instanceof FlagError &&
      e.message ===
        "--show-hidden-metrics-for-version must be omitted or have the value '1.32'. Only the previous minor version is allowed",
  );
});
