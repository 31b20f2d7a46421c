// The shape of the resource catalog: what the server serves. Generated data
// (server/apis/generated/) is read into these types by server/apis/catalog.ts.

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface SubresourceInfo {
  /** e.g. `status`, `scale`, `log`, `exec`, `eviction`, `binding`, `token`, `approval`, `ephemeralcontainers`, `resize` */
  name: string;
  /** the kind sent and returned, e.g. Scale in autoscaling/v1 for `scale` */
  kind: GroupVersionKind;
  verbs: Verb[];
}

export interface ResourceInfo {
  group: string;
  version: string;
  /** plural, e.g. `deployments` */
  resource: string;
  singularName: string;
  kind: string;
  /** e.g. `DeploymentList`; '' for resources that cannot be listed (reviews, bindings) */
  listKind: string;
  namespaced: boolean;
  /** sorted, as discovery shows them */
  verbs: Verb[];
  shortNames: string[];
  categories: string[];
  subresources: SubresourceInfo[];
  /** the version objects are stored in (same group unless `storageGroup` says otherwise);
   *  others convert to/from it */
  storageVersion: string;
  /** set when objects are stored as another group's kind: events.k8s.io Events are stored as
   *  core (`''`) v1 Events under the same keys, like kube-apiserver's cohabiting resources */
  storageGroup?: string;
  /** the group version preferred by discovery for this group */
  preferredVersion: string;
  /** base64 of the first 8 bytes of sha256("<group>/<storageVersion>/<kind>") as kube-apiserver computes it;
   *  the value kube-apiserver 1.33 advertises (it still encodes CRDs, IPAddresses and ServiceCIDRs
   *  as v1beta1); '' for resources that are not stored (reviews, bindings, componentstatuses) */
  storageVersionHash: string;
  /** a version that is served but deprecated (warns) */
  deprecated?: boolean;
  /** the `Warning` header text kube-apiserver sends for requests to a deprecated resource */
  deprecationWarning?: string;
  /** the release that no longer serves a deprecated resource (`1.34`), when one is planned */
  removedRelease?: string;
  /** OpenAPI definition name, e.g. `io.k8s.api.apps.v1.Deployment` */
  definition: string;
}

export interface GroupVersionInfo {
  group: string;
  version: string;
  resources: ResourceInfo[];
}
