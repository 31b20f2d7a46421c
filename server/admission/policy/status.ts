// status.observedGeneration and status.typeChecking of ValidatingAdmissionPolicies, as kube's
// validatingadmissionpolicy-status controller writes them: when a policy's generation moves
// past the observed one, its expressions are type-checked against the schemas of the kinds it
// matches (typechecking.ts) and the warnings replace the previous ones.
//
// Every replica runs this off its own policy informer. The write is idempotent and made
// through the status subresource's read-modify-write, so replicas racing on the same policy
// end with one write that the others see and skip.

import type { KubeObject } from '../../../storage/interface.js';
import { startInformer, type Informer } from '../../authz/informer.js';
import { internalContext, isNotFound } from '../../controllers/util.js';
import type { Logger } from '../../log.js';
import type { ResourceResolver } from '../../registry/rest.js';
import { customResourceSchema, servedKindSchemas } from './kind-schemas.js';
import { typeCheckPolicy } from './typechecking.js';
import type { PolicySpec } from './types.js';

const FIELD_MANAGER = 'validatingadmissionpolicy-status-controller';

function needsStatus(p: KubeObject): boolean {
  const generation = (p.metadata.generation as number | undefined) ?? 0;
  const observed = ((p['status'] as { observedGeneration?: number } | undefined)?.observedGeneration as number | undefined) ?? 0;
  return generation > observed;
}

export function followPolicyStatus(policies: Informer, resolver: ResourceResolver, log: Logger, signal: AbortSignal): void {
  const status = resolver.lookup('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies', 'status');
  if (!status) return;
  // custom resources are checked against their CRDs' schemas, followed here
  const crdRest = resolver.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
  const crds = crdRest ? startInformer(crdRest, log, signal) : undefined;
  const kinds = servedKindSchemas(resolver, crds && ((gvk) => customResourceSchema(crds.list(), gvk)));
  const queue = new Set<string>();
  let running = false;

  const drain = async () => {
    if (running) return;
    running = true;
    try {
      await crds?.synced;
      while (queue.size > 0 && !signal.aborted) {
        const name = queue.values().next().value as string;
        queue.delete(name);
        const cached = policies.get('', name);
        if (!cached || !needsStatus(cached)) continue;
        try {
          await status.update(
            internalContext(FIELD_MANAGER, '', signal),
            name,
            (current) => {
              if (!current) throw Object.assign(new Error('gone'), { code: 404 });
              if (!needsStatus(current)) return current;
              const st = (current['status'] ?? {}) as Record<string, unknown>;
              const warnings = typeCheckPolicy((current['spec'] ?? {}) as PolicySpec, kinds);
              const typeChecking = warnings.length > 0 ? { expressionWarnings: warnings } : {};
              return { ...current, status: { ...st, observedGeneration: current.metadata.generation, typeChecking } };
            },
            { allowCreate: false },
          );
        } catch (err) {
          if (signal.aborted || isNotFound(err) || (err as { code?: unknown }).code === 404) continue;
          log.warn('could not write the status of a ValidatingAdmissionPolicy', { name, err: (err as Error).message });
        }
      }
    } finally {
      running = false;
    }
  };

  policies.onChange((type, obj) => {
    if (type === 'DELETED' || !needsStatus(obj)) return;
    queue.add(obj.metadata.name ?? '');
    void drain();
  });
}
