// The replica under fuzz: a real kapi with its own etcd, RBAC on, the admin and a user who may
// only read and write ConfigMaps and Secrets in one namespace. Sentinel objects are kept in
// both namespaces so that a request that reaches the wrong object shows.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createNamespace, loadKubeconfig, startKapi, type KapiProcess } from '../harness.js';
import type { ClientCredentials } from '../http-client.js';
import { LONG_LIST_ITEMS, LONG_LISTS } from './cardinality.js';
import type { FuzzTargets } from './cases.js';
import { processAlive } from '../../storage/testing/processes.js';

export const LIMITED_TOKEN = 'fuzz-limited-token';
const LIMITED_USER = 'fuzz-limited';

export interface FuzzReplica {
  kapi: KapiProcess;
  admin: ClientCredentials;
  targets: FuzzTargets;
  stop(): Promise<void>;
}

/** the objects whose resourceVersion no fuzz case may change */
export function sentinelPaths(t: FuzzTargets): string[] {
  const out = [`/api/v1/namespaces/${t.namespace}`, `/api/v1/namespaces/${t.otherNamespace}`];
  for (const ns of [t.namespace, t.otherNamespace]) {
    for (const r of ['configmaps', 'secrets']) out.push(`/api/v1/namespaces/${ns}/${r}/${t.sentinel}`);
  }
  return out;
}

async function mustCreate(kapi: KapiProcess, collection: string, body: unknown): Promise<void> {
  const res = await kapi.http.post(collection, body);
  if (res.status !== 201 && res.status !== 409) throw new Error(`create in ${collection}: HTTP ${res.status} ${res.body}`);
}

/** makes the ConfigMap, Secret and Pod that cases aim at again, where a case deleted them */
export async function ensureTargets(kapi: KapiProcess, t: FuzzTargets): Promise<void> {
  const ns = `/api/v1/namespaces/${t.namespace}`;
  await mustCreate(kapi, `${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: t.target }, data: { k: 'v' } });
  await mustCreate(kapi, `${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: t.target }, stringData: { k: 'v' } });
  await mustCreate(kapi, `${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: t.target },
    spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] },
  });
}

export async function startFuzzReplica(extraArgs: string[] = []): Promise<FuzzReplica> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-fuzz-'));
  const tokens = path.join(dir, 'tokens.csv');
  writeFileSync(tokens, `${LIMITED_TOKEN},${LIMITED_USER},fuzz-limited-uid\n`);
  let kapi: KapiProcess | undefined;
  try {
    // CBOR on, so that its decoders meet hostile bodies too (objects are then stored as CBOR)
    kapi = await startKapi({
      extraArgs: [
        '--authorization-mode=Node,RBAC',
        '--token-auth-file',
        tokens,
        '--feature-gates=CBORServingAndStorage=true',
        // bootstrap tokens are one more parser of bearer tokens for the credential cases
        '--enable-bootstrap-token-auth',
        ...extraArgs,
      ],
    });
    const targets: FuzzTargets = { namespace: 'fuzz-a', otherNamespace: 'fuzz-b', target: 'target', sentinel: 'sentinel' };
    await createNamespace(kapi.http, targets.namespace);
    await createNamespace(kapi.http, targets.otherNamespace);
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${targets.namespace}`;
    await mustCreate(kapi, `${rbac}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'fuzz-limited' },
      // no deletecollection: a collection delete would legitimately remove the sentinels
      rules: [
        { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      ],
    });
    await mustCreate(kapi, `${rbac}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'fuzz-limited' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'fuzz-limited' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: LIMITED_USER }],
    });
    for (const ns of [targets.namespace, targets.otherNamespace]) {
      await mustCreate(kapi, `/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: targets.sentinel },
        data: { keep: 'me' },
      });
      await mustCreate(kapi, `/api/v1/namespaces/${ns}/secrets`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: targets.sentinel },
        stringData: { keep: 'me' },
      });
    }
    await ensureTargets(kapi, targets);
    // a long list for strategic merge patches to merge into (cardinality.ts): no case deletes it
    await mustCreate(kapi, `/apis/apps/v1/namespaces/${targets.namespace}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: LONG_LISTS },
      spec: {
        selector: { matchLabels: { app: LONG_LISTS } },
        template: {
          metadata: { labels: { app: LONG_LISTS } },
          spec: {
            containers: [
              { name: 'c', image: 'i', env: Array.from({ length: LONG_LIST_ITEMS }, (_v, i) => ({ name: `E${i}`, value: 'v' })) },
            ],
          },
        },
      },
    });
    const started = kapi;
    return {
      kapi: started,
      admin: loadKubeconfig(started.kubeconfig),
      targets,
      async stop() {
        await started.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await kapi?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** resourceVersion (and uid) of every sentinel, read by the admin; 'missing' when it is gone */
export async function snapshotSentinels(kapi: KapiProcess, t: FuzzTargets): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const p of sentinelPaths(t)) {
    const res = await kapi.http.get(p);
    if (res.status === 404) {
      out.set(p, 'missing');
      continue;
    }
    if (res.status !== 200) throw new Error(`GET ${p}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
    const meta = (JSON.parse(res.body) as { metadata: { resourceVersion: string; uid: string; deletionTimestamp?: string } }).metadata;
    out.set(p, `${meta.uid}@${meta.resourceVersion}${meta.deletionTimestamp ? ' terminating' : ''}`);
  }
  return out;
}

/** resident memory of a process in MiB, from /proc/<pid>/status; undefined once it is gone */
export function rssMiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** the lines of a log tail that say why a process died (fatal errors, stack overflows) */
function lastWords(log: string): string {
  const lines = log
    .split('\n')
    .filter((l) => /FATAL|out of memory|Maximum call stack|RangeError|TypeError|Error:|Aborted|Segmentation/.test(l));
  return lines.length ? lines.slice(-5).join(' | ') : `no fatal error logged; tail: ${log.slice(-500)}`;
}

/** problems with the replica's health: not alive, /readyz, a normal GET; empty when it is well */
export async function healthProblems(replica: FuzzReplica): Promise<string[]> {
  const { kapi, targets } = replica;
  if (!processAlive(kapi.pid)) return [`replica process ${kapi.pid} is gone: ${lastWords(kapi.logs())}`];
  const problems: string[] = [];
  try {
    const ready = await kapi.http.get('/readyz', { timeoutMs: 20_000 });
    if (ready.status !== 200) problems.push(`/readyz answered ${ready.status}: ${ready.body.slice(0, 300)}`);
    const get = await kapi.http.get(`/api/v1/namespaces/${targets.namespace}/configmaps/${targets.sentinel}`, { timeoutMs: 20_000 });
    if (get.status !== 200) problems.push(`GET of a sentinel answered ${get.status}: ${get.body.slice(0, 300)}`);
  } catch (err) {
    problems.push(`health check failed: ${(err as Error).message}`);
  }
  return problems;
}
