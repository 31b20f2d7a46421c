// Done-when 7: the deployment artifacts are valid. deploy/docker-compose.yml passes
// `docker-compose config` and has the local cluster's topology; helm/kapi passes `helm lint`
// and `helm template` with bundled and with external etcd, and what it renders passes
// `kubectl apply --dry-run=server` against kapi itself.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { kubectl, kubectlOk, repoRoot, startKapi, uniqueName, type KapiProcess } from './harness.js';

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command (argv, no shell) in the repository root; kills it by PID after 120 s. */
function run(cmd: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.pid !== undefined && process.kill(child.pid, 'SIGKILL'), 120_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${cmd}: ${err.message} (scripts/install-deps.sh installs it)`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function runOk(cmd: string, args: string[]): Promise<string> {
  const r = await run(cmd, args);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const helm = (args: string[]): Promise<string> => runOk(path.join(repoRoot, 'scripts', 'helm.sh'), args);

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}

interface Container {
  name: string;
  args?: string[];
  command?: string[];
  readinessProbe?: { httpGet?: { path: string; scheme?: string } };
  livenessProbe?: { httpGet?: { path: string; scheme?: string } };
}

function manifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

function kinds(ms: Manifest[]): string[] {
  return ms.map((m) => `${m.kind}/${m.metadata.name}`).sort();
}

function podContainers(m: Manifest): Container[] {
  return (m.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers;
}

const EXTERNAL = [
  '--set',
  'etcd.bundled=false',
  '--set',
  'etcd.external.endpoints={https://etcd-a.example:2379,https://etcd-b.example:2379,https://etcd-c.example:2379}',
  '--set',
  'etcd.external.tlsSecret=etcd-client',
];

describe('docker-compose', () => {
  it('docker-compose config accepts deploy/docker-compose.yml: 3 etcd members, kapi certs once, 3 replicas on the shared PKI, haproxy', async () => {
    const out = await runOk('docker-compose', ['-f', 'deploy/docker-compose.yml', 'config']);
    const config = parse(out) as {
      services: Record<
        string,
        {
          command?: string[];
          entrypoint?: string[];
          ports?: unknown[];
          volumes?: unknown[];
          depends_on?: Record<string, { condition: string }>;
        }
      >;
      volumes: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(config.services).sort(), ['etcd1', 'etcd2', 'etcd3', 'haproxy', 'kapi-certs', 'kapi1', 'kapi2', 'kapi3']);
    assert.equal(config.services['kapi-certs']!.command![0], 'certs');
    for (const r of ['kapi1', 'kapi2', 'kapi3']) {
      const svc = config.services[r]!;
      assert.ok(svc.command!.includes('--etcd-servers=http://etcd1:2379,http://etcd2:2379,http://etcd3:2379'), `${r}: ${svc.command}`);
      assert.ok(svc.command!.includes('--cert-dir=/var/lib/kapi/pki'), `${r}: ${svc.command}`);
      assert.equal(svc.depends_on!['kapi-certs']!.condition, 'service_completed_successfully');
    }
    assert.ok('pki' in config.volumes);
  });

  it('deploy/haproxy.cfg: TCP mode, /readyz checks over TLS; haproxy -c accepts it', async () => {
    const r = await run('haproxy', ['-c', '-f', 'deploy/haproxy.cfg']);
    assert.equal(r.code, 0, r.stderr);
    const cfg = (await import('node:fs')).readFileSync(path.join(repoRoot, 'deploy', 'haproxy.cfg'), 'utf8');
    assert.match(cfg, /^\s*mode tcp$/m);
    assert.match(cfg, /^\s*option httpchk GET \/readyz$/m);
    assert.match(cfg, /check check-ssl verify none inter 1s fall 2 rise 2/);
  });
});

describe('helm chart', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('helm');

  before(async () => {
    kapi = await startKapi();
  });
  after(async () => {
    await kapi?.stop();
  });

  it('helm lint passes with bundled and with external etcd', async () => {
    assert.match(await helm(['lint', '--strict', 'helm/kapi']), /1 chart\(s\) linted, 0 chart\(s\) failed/);
    assert.match(await helm(['lint', '--strict', 'helm/kapi', ...EXTERNAL]), /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('helm template, bundled etcd: Deployment, Service, PDB, etcd StatefulSet and headless Service; probes on /livez and /readyz', async () => {
    const ms = manifests(await helm(['template', 'kapi', 'helm/kapi', '--namespace', ns]));
    assert.deepEqual(kinds(ms), [
      'Deployment/kapi',
      'PodDisruptionBudget/kapi',
      'PodDisruptionBudget/kapi-etcd',
      'Service/kapi',
      'Service/kapi-etcd-peers',
      'StatefulSet/kapi-etcd',
    ]);
    const deploy = ms.find((m) => m.kind === 'Deployment')!;
    assert.equal(deploy.spec!.replicas, 3);
    const c = podContainers(deploy).find((x) => x.name === 'kapi')!;
    assert.deepEqual(c.livenessProbe!.httpGet, { path: '/livez', port: 'https', scheme: 'HTTPS' });
    assert.deepEqual(c.readinessProbe!.httpGet, { path: '/readyz', port: 'https', scheme: 'HTTPS' });
    const servers = c.args!.find((a) => a.startsWith('--etcd-servers='))!;
    assert.equal(servers.split(',').length, 3);
    assert.match(servers, new RegExp(`^--etcd-servers=http://kapi-etcd-0\\.kapi-etcd-peers\\.${ns}\\.svc:2379,`));
    const sts = ms.find((m) => m.kind === 'StatefulSet')!;
    assert.equal(sts.spec!.replicas, 3);
    const peers = ms.find((m) => m.metadata.name === 'kapi-etcd-peers')!;
    assert.equal((peers.spec as { clusterIP: string }).clusterIP, 'None');
    for (const m of ms) assert.equal(m.metadata.namespace, ns, `${m.kind}/${m.metadata.name} namespace`);
  });

  it('helm template, external etcd: no etcd objects; the replicas use the endpoints and the client TLS secret', async () => {
    const ms = manifests(await helm(['template', 'kapi', 'helm/kapi', '--namespace', ns, ...EXTERNAL]));
    assert.deepEqual(kinds(ms), ['Deployment/kapi', 'PodDisruptionBudget/kapi', 'Service/kapi']);
    const args = podContainers(ms.find((m) => m.kind === 'Deployment')!).find((x) => x.name === 'kapi')!.args!;
    assert.ok(
      args.includes('--etcd-servers=https://etcd-a.example:2379,https://etcd-b.example:2379,https://etcd-c.example:2379'),
      args.join(' '),
    );
    assert.ok(args.includes('--etcd-cafile=/etc/kapi/etcd/ca.crt'));
    // without endpoints, external etcd is an error
    const missing = await run(path.join(repoRoot, 'scripts', 'helm.sh'), ['template', 'kapi', 'helm/kapi', '--set', 'etcd.bundled=false']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /etcd\.external\.endpoints is required/);
  });

  it('the rendered manifests pass kubectl apply --dry-run=server against kapi, and nothing is created', async () => {
    await kubectlOk(['create', 'namespace', ns], { kubeconfig: kapi.kubeconfig });
    for (const values of [
      [],
      EXTERNAL,
      [
        '--set',
        'service.type=NodePort',
        '--set',
        'service.nodePort=30443',
        '--set',
        'tlsSans={kapi.example.com}',
        '--set',
        'extraArgs={-v=2}',
      ],
    ]) {
      const rendered = await helm(['template', 'kapi', 'helm/kapi', '--namespace', ns, ...values]);
      const out = await kubectlOk(['apply', '--dry-run=server', '-f', '-'], { kubeconfig: kapi.kubeconfig, input: rendered });
      for (const m of manifests(rendered)) {
        assert.match(
          out,
          new RegExp(`^${m.kind.toLowerCase()}(\\.\\S+)?/${m.metadata.name} created \\(server dry run\\)$`, 'm'),
          `${m.kind}/${m.metadata.name}:\n${out}`,
        );
      }
    }
    const left = await kubectlOk(['get', 'deployments,statefulsets,services,poddisruptionbudgets', '-n', ns, '-o', 'name'], {
      kubeconfig: kapi.kubeconfig,
    });
    assert.equal(left.trim(), '');
  });

  it('the dry run does validate: a misspelt field in the rendered Deployment is rejected', async () => {
    const rendered = await helm(['template', 'kapi', 'helm/kapi', '--namespace', ns, ...EXTERNAL]);
    const broken = rendered.replace('periodSeconds: 5', 'periodSecondz: 5');
    assert.notEqual(broken, rendered);
    const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], { kubeconfig: kapi.kubeconfig, input: broken });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unknown field "spec\.template\.spec\.containers\[0\]\.readinessProbe\.periodSecondz"/);
  });
});
