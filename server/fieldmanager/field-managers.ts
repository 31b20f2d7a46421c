// One FieldManager per served endpoint (resource version, and subresource), built on first use
// over the built-in schema registry.

import type { KubeObject } from '../../storage/interface.js';
import { loadSchemas, type SchemaRegistry } from '../apis/schema.js';
import type { ResourceInfo } from '../apis/types.js';
import { convertObject, requestKindOf } from '../registry/conversion/index.js';
import { GoShape } from './go-shape.js';
import { FieldManager } from './manager.js';
import type { Path } from './path.js';
import { TypeModel } from './schema.js';

/** the paths an endpoint resets whatever the request says, which nobody owns through it */
export function resetPathsFor(info: ResourceInfo, subresource: string, statusKeepsLabels = false): Path[] {
  const hasStatus = info.subresources.some((s) => s.name === 'status');
  if (subresource === '') return hasStatus ? [[{ field: 'status' }]] : [];
  if (subresource === 'status') {
    const out: Path[] = [[{ field: 'spec' }]];
    if (statusKeepsLabels) out.push([{ field: 'metadata' }, { field: 'labels' }]);
    return out;
  }
  return [];
}

export class FieldManagers {
  private readonly types: TypeModel;
  private readonly shape: GoShape;
  private readonly cache = new Map<string, FieldManager>();
  private readonly infos = new Map<string, ResourceInfo>();

  constructor(schemas: SchemaRegistry = loadSchemas()) {
    this.types = new TypeModel(schemas);
    this.shape = new GoShape(schemas);
  }

  /** `statusKeepsLabels`: the resource's status writes keep the stored labels (its descriptor) */
  for(info: ResourceInfo, subresource = '', statusKeepsLabels = false): FieldManager {
    const key = `${info.group}/${info.version}/${info.resource}/${subresource}/${statusKeepsLabels}`;
    let fm = this.cache.get(key);
    // a custom resource's info is rebuilt when its CRD changes: so is its field manager
    if (fm && this.infos.get(key) !== info) fm = undefined;
    if (!fm) {
      this.infos.set(key, info);
      const kind = requestKindOf(info);
      fm = new FieldManager({
        types: this.types,
        shape: this.shape,
        kind,
        subresource,
        resetPaths: resetPathsFor(info, subresource, statusKeepsLabels),
        convert: (obj: KubeObject, to) => convertObject(obj, kind, to),
      });
      this.cache.set(key, fm);
    }
    return fm;
  }
}

let shared: FieldManagers | undefined;

/** the process-wide field managers over the built-in schemas */
export function fieldManagers(): FieldManagers {
  shared ??= new FieldManagers();
  return shared;
}
