// The Kubernetes protobuf descriptor (generated/k8s-proto.json, written by
// scripts/generate-k8s-proto.mjs from the upstream generated.proto files and the Go json tags):
// every message of k8s.io/api and k8s.io/apimachinery with its fields in Go declaration order,
// and which proto package serves which apiVersion. Read at run time, like server/apis/assets.ts,
// so that the compiler does not type-check the literal; scripts/copy-assets.mjs copies it to dist/.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { GroupVersionKind } from '../apis/types.js';

export type ScalarType = 'string' | 'bytes' | 'bool' | 'int32' | 'int64' | 'uint32' | 'uint64' | 'double' | 'float';

export interface FieldDescriptor {
  /** the JSON name (Go's json tag); for inline fields the Go type name, unused */
  jsonName: string;
  number: number;
  /** a scalar, or the name of a message (e.g. `api.core.v1.PodSpec`) */
  type: string;
  /** map fields: key and value types; the entry is message {key = 1, value = 2} */
  map?: { key: ScalarType; value: string };
  repeated: boolean;
  /** an embedded Go struct whose fields appear in the parent's JSON object */
  inline: boolean;
  /** Go's JSON encoding keeps this field's zero value (pointer or no omitempty) */
  keepZero: boolean;
}

export interface MessageDescriptor {
  name: string;
  fields: readonly FieldDescriptor[];
  byNumber: ReadonlyMap<number, FieldDescriptor>;
  /** a Go named slice (`type Verbs []string`): JSON is the array of its `items` */
  sliceWrapper: boolean;
}

export interface ProtoCatalog {
  message(name: string): MessageDescriptor | undefined;
  /** the message of a kind, or undefined for kinds without one (custom resources, Table) */
  messageForKind(gvk: GroupVersionKind): MessageDescriptor | undefined;
}

type CompactField = [string, number, string | [string, string], number];
interface CompactDescriptor {
  packages: Record<string, string>;
  wrappers: string[];
  messages: Record<string, CompactField[]>;
}

const FLAG_REPEATED = 1;
const FLAG_MAP = 2;
const FLAG_INLINE = 4;
const FLAG_KEEP_ZERO = 8;

const META_V1 = 'apimachinery.pkg.apis.meta.v1';
const META_V1BETA1 = 'apimachinery.pkg.apis.meta.v1beta1';

const META_KINDS = new Set([
  'Status',
  'WatchEvent',
  'DeleteOptions',
  'ListOptions',
  'GetOptions',
  'CreateOptions',
  'UpdateOptions',
  'PatchOptions',
  'APIVersions',
  'APIGroup',
  'APIGroupList',
  'APIResourceList',
  'PartialObjectMetadata',
  'PartialObjectMetadataList',
]);

const candidates = (name: string): URL[] => [
  new URL(`./generated/${name}`, import.meta.url),
  // dist/server/protobuf/ -> server/protobuf/generated/
  new URL(`../../../server/protobuf/generated/${name}`, import.meta.url),
];

function readDescriptor(): CompactDescriptor {
  const name = 'k8s-proto.json';
  for (const url of candidates(name)) {
    if (existsSync(url)) return JSON.parse(readFileSync(url, 'utf8')) as CompactDescriptor;
  }
  const tried = candidates(name)
    .map((u) => fileURLToPath(u))
    .join(', ');
  throw new Error(`generated file ${name} not found (tried ${tried}); run node scripts/generate-k8s-proto.mjs`);
}

function expandField([jsonName, number, type, flags]: CompactField): FieldDescriptor {
  const field: FieldDescriptor = {
    jsonName,
    number,
    type: typeof type === 'string' ? type : type[1],
    repeated: (flags & FLAG_REPEATED) !== 0,
    inline: (flags & FLAG_INLINE) !== 0,
    keepZero: (flags & FLAG_KEEP_ZERO) !== 0,
  };
  if ((flags & FLAG_MAP) !== 0 && Array.isArray(type)) field.map = { key: type[0] as ScalarType, value: type[1] };
  return Object.freeze(field);
}

let cached: ProtoCatalog | undefined;

/** The catalog over generated/k8s-proto.json (read once per process). */
export function loadProtoCatalog(): ProtoCatalog {
  if (cached) return cached;
  const raw = readDescriptor();
  const wrappers = new Set(raw.wrappers);
  const messages = new Map<string, MessageDescriptor>();
  for (const [name, compact] of Object.entries(raw.messages)) {
    const fields = Object.freeze(compact.map(expandField));
    messages.set(
      name,
      Object.freeze({ name, fields, byNumber: new Map(fields.map((f) => [f.number, f])), sliceWrapper: wrappers.has(name) }),
    );
  }
  const packages = new Map(Object.entries(raw.packages));
  packages.set('meta.k8s.io/v1', META_V1);
  packages.set('meta.k8s.io/v1beta1', META_V1BETA1);

  cached = {
    message: (name) => messages.get(name),
    messageForKind: ({ group, version, kind }) => {
      const apiVersion = group === '' ? version : `${group}/${version}`;
      const pkg = packages.get(apiVersion);
      const own = pkg === undefined ? undefined : messages.get(`${pkg}.${kind}`);
      if (own) return own;
      // kube-apiserver registers these meta/v1 kinds in every group version (and Status,
      // APIVersions, ... as v1), custom resource groups included
      if (!META_KINDS.has(kind)) return undefined;
      return messages.get(`${META_V1}.${kind}`);
    },
  };
  return cached;
}
