// A PATCH content type: how its documents are parsed and applied. JSON patch and merge
// patch are built in; strategic merge patch and server-side apply plug in the same way.

import type { GroupVersionKind } from '../../apis/types.js';
import type { KubeObject } from '../../../storage/interface.js';
import type { RESTResource, RequestContext } from '../../registry/rest.js';

export interface PatchTarget {
  resource: RESTResource;
  ctx: RequestContext;
  name: string;
  /** '' for cluster-scoped resources */
  namespace: string;
  kind: GroupVersionKind;
  fieldManager: string;
  /** `force=true` (apply only) */
  force: boolean;
}

export interface PatchApplier {
  /** parses and checks the document once; throws a StatusError (400/413) when malformed */
  parse(body: Buffer): unknown;
  /** The patched object. `current` is a private copy (null when absent, only for appliers
   *  that create); throws a StatusError when the patch does not apply. */
  apply(current: KubeObject | null, patch: unknown, target: PatchTarget): KubeObject | Promise<KubeObject>;
  /** true for apply: a missing object is created from the patch */
  readonly createsMissing: boolean;
  /** true for apply: fieldManager is required and `force` allowed */
  readonly isApply: boolean;
}
