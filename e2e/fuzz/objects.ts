// Valid ConfigMaps, Secrets and Pods to start from, and the ways a generated document turns
// hostile: a wrong type at any field, a deep value, a huge string, a body that names another
// object or namespace than the path.

import { anyValue, deepText, hostileScalar, pathsOf, raw, setAt, type Json } from './json-text.js';
import type { Prng } from './prng.js';

export type FuzzResource = 'configmaps' | 'secrets' | 'pods';

export function validObject(resource: FuzzResource, name: string, namespace: string | undefined, rng: Prng): { [key: string]: Json } {
  const metadata: { [key: string]: Json } = {
    name,
    labels: { app: 'fuzz', tier: rng.pick(['a', 'b']) },
    annotations: { note: rng.string(8) },
  };
  if (namespace !== undefined) metadata.namespace = namespace;
  switch (resource) {
    case 'configmaps':
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata,
        data: { k: rng.string(12), 'file.txt': 'line\n' },
        binaryData: { b: 'AAEC' },
      };
    case 'secrets':
      return { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', data: { password: 'cGFzcw==' }, stringData: { user: 'u' } };
    case 'pods':
      return {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata,
        spec: {
          containers: [
            {
              name: 'c',
              image: 'registry.k8s.io/pause:3.9',
              ports: [{ containerPort: 80, protocol: 'TCP' }],
              env: [{ name: 'A', value: 'b' }],
              resources: { limits: { cpu: '100m', memory: '64Mi' } },
            },
          ],
          restartPolicy: 'Always',
          tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
        },
      };
  }
}

/** a hostile variant of `doc` and whether kube refuses every such document */
export function hostileDocument(
  doc: { [key: string]: Json },
  rng: Prng,
  others: { name: string; namespace: string },
): { doc: Json; mustFail: boolean; how: string } {
  const paths = pathsOf(doc);
  switch (rng.int(0, 9)) {
    case 0: {
      const p = rng.pick(paths);
      return { doc: setAt(doc, p, anyValue(rng)), mustFail: false, how: 'wrong-type' };
    }
    case 1: {
      const p = rng.pick(paths);
      return { doc: setAt(doc, p, hostileScalar(rng)), mustFail: false, how: 'hostile-scalar' };
    }
    case 2: {
      const p = rng.pick(paths);
      const depth = rng.pick([100, 1000, 10_000, 100_000, rng.size(200_000)]);
      return {
        doc: setAt(doc, p, raw(deepText(depth, rng.pick(['array', 'object', 'mixed'] as const)))),
        mustFail: depth > 10_000,
        how: 'deep',
      };
    }
    case 3:
      return { doc: setAt(doc, ['metadata', 'name'], others.name), mustFail: true, how: 'names-another-object' };
    case 4:
      return { doc: setAt(doc, ['metadata', 'namespace'], others.namespace), mustFail: true, how: 'names-another-namespace' };
    case 5: {
      const many: { [key: string]: Json } = {};
      for (let i = rng.size(50_000); i > 0; i--) many[`k${i}`] = rng.string(rng.int(0, 20));
      return {
        doc: setAt(doc, [rng.pick(['data', 'metadata']), rng.pick(['labels', 'annotations', 'x'])], many),
        mustFail: false,
        how: 'many-keys',
      };
    }
    case 6:
      return {
        doc: setAt(
          doc,
          rng.pick([['apiVersion'], ['kind']]),
          rng.pick(['v2', 'Pod', 'Namespace', 'List', '', 'v1/ConfigMap', 'DeleteOptions', 'Status']),
        ),
        mustFail: false,
        how: 'type-meta',
      };
    case 7:
      return { doc: anyValue(rng), mustFail: false, how: 'not-an-object' };
    case 8: {
      let d: Json = doc;
      for (let i = rng.int(1, 5); i > 0; i--) d = setAt(d, rng.pick(paths), anyValue(rng));
      return { doc: d, mustFail: false, how: 'several-wrong' };
    }
    default:
      return {
        doc: setAt(
          doc,
          [
            'metadata',
            rng.pick(['finalizers', 'ownerReferences', 'managedFields', 'resourceVersion', 'uid', 'generateName', 'deletionTimestamp']),
          ],
          anyValue(rng),
        ),
        mustFail: false,
        how: 'metadata-field',
      };
  }
}
