// What the benchmarks create through kapi before they measure: namespaces, and the ReplicaSet
// that owns the Pods they create.

import { replicaSetBody, type Owner } from './bodies.js';
import type { TokenClient } from './client.js';

export async function createNamespace(client: TokenClient, name: string): Promise<void> {
  const body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
  await client.expect(201, 'POST', '/api/v1/namespaces', { body });
}

/** a ReplicaSet `name` in `namespace`, as the owner its Pods' bodies name */
export async function createPodOwner(client: TokenClient, namespace: string, name: string): Promise<Owner> {
  const created = await client.expect(201, 'POST', `/apis/apps/v1/namespaces/${namespace}/replicasets`, { body: replicaSetBody(name) });
  const rs = JSON.parse(created.toString()) as { metadata: { name: string; uid: string } };
  return { name: rs.metadata.name, uid: rs.metadata.uid };
}
