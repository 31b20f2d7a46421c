// Keeps the bootstrap FlowSchemas and PriorityLevelConfigurations in the cluster, as
// kube-apiserver's priority-and-fairness config producer does: a missing object is created
// (mandatory or suggested); a mandatory object's spec is always put back to the default; a
// suggested one only while its apf.kubernetes.io/autoupdate-spec annotation says "true" (no
// annotation: only while the object was never changed, generation 1), and the annotation is
// written to say which. Every replica runs it: a create that loses to another replica's, or
// an update that meets a newer object, is simply looked at again.

import type { KubeObject } from '../../storage/interface.js';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { internalContext, isAlreadyExists, isConflict, isNotFound } from '../controllers/util.js';
import { jsonEqual } from '../registry/object.js';
import {
  AUTOUPDATE_SPEC_ANNOTATION,
  EXEMPT,
  FLOWCONTROL_GROUP,
  FLOWCONTROL_VERSION,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from './bootstrap.js';

import { defaultFlowSchema, defaultPriorityLevelConfiguration } from '../registry/flowcontrol/strategies.js';

const fieldManager = 'api-priority-and-fairness-config-producer-v1';

type Outcome = 'created' | 'updated' | 'unchanged';

function parseBool(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (['true', 'True', 'TRUE', '1', 't', 'T'].includes(v)) return true;
  if (['false', 'False', 'FALSE', '0', 'f', 'F'].includes(v)) return false;
  return undefined;
}

/** The exempt level's concurrency shares and lendable percent are the operator's to set:
 *  they do not count as a difference (the rest of a mandatory spec does). */
function specEqualish(bootstrap: KubeObject, current: KubeObject): boolean {
  if (bootstrap.kind === 'PriorityLevelConfiguration' && bootstrap.metadata.name === EXEMPT) {
    const have = current.spec as { exempt?: Record<string, unknown> } | undefined;
    if (!have?.exempt) return false;
    const want = structuredClone(bootstrap.spec) as { exempt: Record<string, unknown> };
    for (const field of ['nominalConcurrencyShares', 'lendablePercent']) {
      if (have.exempt[field] === undefined) delete want.exempt[field];
      else want.exempt[field] = have.exempt[field];
    }
    return jsonEqual(want, current.spec);
  }
  return jsonEqual(current.spec, bootstrap.spec);
}

/** the object to write back, or undefined when `current` is as it should be */
export function desiredUpdate(current: KubeObject, bootstrapAsGiven: KubeObject, mandatory: boolean): KubeObject | undefined {
  // what is stored went through kube's defaults: compare with the defaulted bootstrap
  const bootstrap = structuredClone(bootstrapAsGiven);
  if (bootstrap.kind === 'FlowSchema') defaultFlowSchema(bootstrap);
  else defaultPriorityLevelConfiguration(bootstrap);
  const annotation = parseBool(current.metadata.annotations?.[AUTOUPDATE_SPEC_ANNOTATION]);
  const autoUpdate = mandatory || (annotation ?? current.metadata.generation === 1);
  const fixAnnotation = annotation !== autoUpdate;
  const fixSpec = autoUpdate && !specEqualish(bootstrap, current);
  if (!fixAnnotation && !fixSpec) return undefined;
  const next: KubeObject = { ...current, metadata: { ...current.metadata } };
  if (fixAnnotation)
    next.metadata.annotations = { ...(current.metadata.annotations ?? {}), [AUTOUPDATE_SPEC_ANNOTATION]: String(autoUpdate) };
  if (fixSpec) next.spec = structuredClone(bootstrap.spec);
  return next;
}

async function ensureOne(res: RESTResource, bootstrap: KubeObject, mandatory: boolean, signal?: AbortSignal): Promise<Outcome> {
  const name = bootstrap.metadata.name!;
  const ctx = internalContext(fieldManager, '', signal);
  for (let attempt = 0; ; attempt++) {
    try {
      let current: KubeObject | undefined;
      try {
        current = await res.get(ctx, name, {});
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      if (!current) {
        await res.create(ctx, structuredClone(bootstrap));
        return 'created';
      }
      const next = desiredUpdate(current, bootstrap, mandatory);
      if (!next) return 'unchanged';
      await res.update(ctx, name, () => next, { allowCreate: false });
      return 'updated';
    } catch (err) {
      if ((isAlreadyExists(err) || isConflict(err) || isNotFound(err)) && attempt < 10) continue;
      throw err;
    }
  }
}

export interface EnsureResult {
  created: string[];
  updated: string[];
}

/** One pass over every bootstrap object (priority levels first, so no schema dangles). */
export async function ensureBootstrapConfiguration(resolver: ResourceResolver, signal?: AbortSignal): Promise<EnsureResult> {
  const lookup = (resource: string): RESTResource => {
    const r = resolver.lookup(FLOWCONTROL_GROUP, FLOWCONTROL_VERSION, resource);
    if (!r) throw new Error(`the registry serves no ${FLOWCONTROL_GROUP}/${FLOWCONTROL_VERSION} ${resource}`);
    return r;
  };
  const levels = lookup('prioritylevelconfigurations');
  const schemas = lookup('flowschemas');
  const steps: Array<[RESTResource, KubeObject[], boolean, string]> = [
    [levels, mandatoryPriorityLevels(), true, 'prioritylevelconfiguration'],
    [levels, suggestedPriorityLevels(), false, 'prioritylevelconfiguration'],
    [schemas, mandatoryFlowSchemas(), true, 'flowschema'],
    [schemas, suggestedFlowSchemas(), false, 'flowschema'],
  ];
  const result: EnsureResult = { created: [], updated: [] };
  for (const [res, objects, mandatory, label] of steps) {
    for (const o of objects) {
      const outcome = await ensureOne(res, o, mandatory, signal);
      if (outcome === 'created') result.created.push(`${label}/${o.metadata.name}`);
      if (outcome === 'updated') result.updated.push(`${label}/${o.metadata.name}`);
    }
  }
  return result;
}
