// Runs a built-in kind's strategy as the generic store does, without storage, for table tests
// of defaulting and validation: defaults, create preparation, validation, and the causes a
// 422 Invalid would carry.

import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { loadCatalog } from '../../apis/catalog.js';
import type { ResourceInfo } from '../../apis/types.js';
import type { StatusCause } from '../../machinery/status.js';
import { convertObject, requestKindOf, storageKindOf } from '../conversion/index.js';
import { clone, orderObject } from '../object.js';
import { strategyFor } from '../registry.js';
import type { ResourceStrategy, StrategyContext } from '../strategy.js';
import { dedupe, toCauses } from '../../machinery/validation/field-error.js';
import { admin } from './harness.js';

export interface KindUnderTest {
  info: ResourceInfo;
  strategy: ResourceStrategy;
  ctx: StrategyContext;
  /** the object after the request version's defaults, prepared for create, in the request version */
  defaulted(obj: KubeObject): KubeObject;
  /** the causes of the 422 a create would answer ([] when valid) */
  createCauses(obj: KubeObject): StatusCause[];
  /** the causes of the 422 an update from `old` (a created object) would answer */
  updateCauses(old: KubeObject, obj: KubeObject): StatusCause[];
}

let catalog: ResourceInfo[] | undefined;

export const fixedUid = '11111111-2222-3333-4444-555555555555';

export function kind(group: string, version: string, resource: string): KindUnderTest {
  catalog ??= loadCatalog().resources();
  const info = catalog.find((r) => r.group === group && r.version === version && r.resource === resource);
  assert.ok(info, `not served: ${group}/${version}/${resource}`);
  const strategy = strategyFor(info);
  const ctx: StrategyContext = {
    request: { user: admin, namespace: 'ns', dryRun: false, fieldValidation: 'Strict', warnings: [] },
    now: new Date('2025-01-01T00:00:00Z'),
    info,
  };
  const toStorage = (o: KubeObject) => convertObject(clone(o), requestKindOf(info), storageKindOf(info));
  const fromStorage = (o: KubeObject) => convertObject(o, storageKindOf(info), requestKindOf(info));
  const prepare = (input: KubeObject): KubeObject => {
    const obj = toStorage(input);
    obj.metadata ??= {};
    if (info.namespaced) obj.metadata.namespace ??= 'ns';
    strategy.applyDefaults(obj, ctx);
    obj.metadata.uid = fixedUid;
    obj.metadata.creationTimestamp = '2025-01-01T00:00:00Z';
    if (strategy.tracksGeneration) obj.metadata.generation = 1;
    strategy.prepareForCreate(obj, ctx);
    return obj;
  };
  return {
    info,
    strategy,
    ctx,
    defaulted: (o) => fromStorage(orderObject(prepare(o))),
    createCauses: (o) => toCauses(dedupe(strategy.validate(prepare(o), ctx))),
    updateCauses: (oldInput, input) => {
      const old = prepare(oldInput);
      old.metadata.resourceVersion = '1';
      const obj = toStorage(input);
      obj.metadata ??= {};
      if (info.namespaced) obj.metadata.namespace ??= 'ns';
      strategy.applyDefaults(obj, ctx);
      obj.metadata.uid = fixedUid;
      obj.metadata.creationTimestamp = old.metadata.creationTimestamp;
      obj.metadata.resourceVersion = '1';
      if (old.metadata.generation !== undefined) obj.metadata.generation = old.metadata.generation;
      strategy.prepareForUpdate(obj, old, ctx);
      return toCauses(dedupe(strategy.validateUpdate(obj, old, ctx)));
    },
  };
}

/** a cause as kube-apiserver renders it, for tables */
export function cause(reason: StatusCause['reason'], field: string, message: string): StatusCause {
  return { reason, message, field };
}
