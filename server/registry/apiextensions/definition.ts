// A CustomResourceDefinition (apiextensions.k8s.io/v1) as the rest of kapi sees it: typed
// accessors, the ResourceInfo of each served version, and the printer columns.

import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceInfo, SubresourceInfo, Verb } from '../../apis/types.js';
import { compareKubeAwareVersions } from '../../apis/catalog.js';
import type { JSONSchemaProps } from './json-schema-props.js';
import type { WebhookClientConfig } from '../admissionregistration/webhook-client.js';

export interface CRDNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CRDVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: Record<string, never>; scale?: ScaleSubresource };
  additionalPrinterColumns?: PrinterColumn[];
}

export interface ConversionWebhookSpec {
  clientConfig?: WebhookClientConfig;
  conversionReviewVersions?: string[];
}

export interface CRDSpec {
  group: string;
  names: CRDNames;
  scope: 'Namespaced' | 'Cluster';
  versions: CRDVersion[];
  preserveUnknownFields?: boolean;
  conversion?: { strategy?: string; webhook?: ConversionWebhookSpec };
}

export interface CRDCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CRDStatus {
  conditions?: CRDCondition[];
  acceptedNames?: CRDNames;
  storedVersions?: string[];
}

export function specOf(crd: KubeObject): CRDSpec {
  return crd.spec as unknown as CRDSpec;
}

export function statusOf(crd: KubeObject): CRDStatus {
  return (crd.status ?? {}) as unknown as CRDStatus;
}

export function conditionOf(crd: KubeObject, type: string): CRDCondition | undefined {
  return statusOf(crd).conditions?.find((c) => c.type === type);
}

export function storageVersionOf(spec: CRDSpec): string {
  return spec.versions.find((v) => v.storage)?.name ?? spec.versions[0]?.name ?? '';
}

/** kube-apiserver's storage version hash: 8 bytes of sha256("<group>/<version>/<kind>") */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

const allVerbs: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** served versions, highest priority first (kube's version order) */
export function servedVersions(spec: CRDSpec): CRDVersion[] {
  return spec.versions.filter((v) => v.served).sort((a, b) => compareKubeAwareVersions(b.name, a.name));
}

/** The ResourceInfo of every served version, named by the accepted names. */
export function resourcesOf(crd: KubeObject): ResourceInfo[] {
  const spec = specOf(crd);
  const names = statusOf(crd).acceptedNames ?? spec.names;
  const storageVersion = storageVersionOf(spec);
  const served = servedVersions(spec);
  const preferred = served[0]?.name ?? storageVersion;
  const listKind = names.listKind || `${names.kind}List`;
  return served.map((v) => {
    const subresources: SubresourceInfo[] = [];
    if (v.subresources?.scale)
      subresources.push({ name: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] });
    if (v.subresources?.status)
      subresources.push({
        name: 'status',
        kind: { group: spec.group, version: v.name, kind: names.kind },
        verbs: ['get', 'patch', 'update'],
      });
    const info: ResourceInfo = {
      group: spec.group,
      version: v.name,
      resource: names.plural,
      singularName: names.singular || names.kind.toLowerCase(),
      kind: names.kind,
      listKind,
      namespaced: spec.scope === 'Namespaced',
      verbs: allVerbs,
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      subresources,
      storageVersion,
      preferredVersion: preferred,
      storageVersionHash: storageVersionHash(spec.group, storageVersion, names.kind),
      definition: `${reverseGroup(spec.group)}.${v.name}.${names.kind}`,
    };
    if (v.deprecated) {
      info.deprecated = true;
      info.deprecationWarning = v.deprecationWarning ?? `${spec.group}/${v.name} ${names.kind} is deprecated`;
    }
    return info;
  });
}

/** kube's OpenAPI definition names for CRs: the group reversed, e.g. com.example.stable */
export function reverseGroup(group: string): string {
  return group.split('.').reverse().join('.');
}

export function versionOf(crd: KubeObject, version: string): CRDVersion | undefined {
  return specOf(crd).versions.find((v) => v.name === version);
}
