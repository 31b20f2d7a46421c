// Owner trees for garbage-collector tests: a Deployment, two ReplicaSets it controls and two
// Pods controlled by each, created through kubectl as the deployment and replica-set
// controllers would (kapi runs neither), plus small readers for their state.

import assert from 'node:assert/strict';
import { kubectl, kubectlOk } from './harness.js';

export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface Meta {
  name: string;
  uid: string;
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: OwnerRef[];
}

export const podSpec = { containers: [{ name: 'c', image: 'nginx' }] };

/** kubectl helpers for one namespace through one kubeconfig */
export function treeTools(kubeconfig: string, ns: string) {
  const k = (args: string[], input?: string) => kubectlOk([...args, '-n', ns], { kubeconfig, input });

  const controllerRef = (apiVersion: string, kind: string, m: Meta): OwnerRef => ({
    apiVersion,
    kind,
    name: m.name,
    uid: m.uid,
    controller: true,
    blockOwnerDeletion: true,
  });

  async function create(manifest: object): Promise<Meta> {
    const out = await k(['create', '-f', '-', '-o', 'json'], JSON.stringify(manifest));
    return (JSON.parse(out) as { metadata: Meta }).metadata;
  }

  /** the object's metadata, or undefined when kubectl says NotFound */
  async function meta(kind: string, name: string): Promise<Meta | undefined> {
    const r = await kubectl(['get', kind, name, '-n', ns, '-o', 'json'], { kubeconfig });
    if (r.code !== 0) {
      assert.match(r.stderr, /NotFound/, r.stderr);
      return undefined;
    }
    return (JSON.parse(r.stdout) as { metadata: Meta }).metadata;
  }

  /** names of objects of `kind` labelled tree=<tree> */
  async function names(kind: string, tree: string): Promise<string[]> {
    const out = await k(['get', kind, '-l', `tree=${tree}`, '-o', 'jsonpath={.items[*].metadata.name}']);
    return out.split(' ').filter(Boolean).sort();
  }

  /** a Deployment, two ReplicaSets it controls and two Pods controlled by each */
  async function tree(name: string, opts: { heldPod?: boolean } = {}) {
    const labels = { tree: name };
    const d = await create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, labels },
      spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec } },
    });
    const replicaSets: string[] = [];
    const pods: string[] = [];
    for (const suffix of ['5d8f9c7b6', '7c9d4f8b5']) {
      const rsName = `${name}-${suffix}`;
      const rs = await create({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: rsName, labels, ownerReferences: [controllerRef('apps/v1', 'Deployment', d)] },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: name, hash: suffix } },
          template: { metadata: { labels: { app: name, hash: suffix } }, spec: podSpec },
        },
      });
      replicaSets.push(rsName);
      for (const p of ['x1', 'x2']) {
        const held = opts.heldPod && pods.length === 0;
        await create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: `${rsName}-${p}`,
            labels: { ...labels, app: name, hash: suffix },
            ownerReferences: [controllerRef('apps/v1', 'ReplicaSet', rs)],
            ...(held ? { finalizers: ['example.com/hold'] } : {}),
          },
          spec: podSpec,
        });
        pods.push(`${rsName}-${p}`);
      }
    }
    return { d, replicaSets: replicaSets.sort(), pods: pods.sort() };
  }

  return { k, meta, names, tree };
}
