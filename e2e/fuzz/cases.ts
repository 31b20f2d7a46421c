// One fuzz case from (seed, index): which input kind to break, against which endpoint, over
// which protocol and as whom. Every generator draws from the case's own PRNG only, so a case
// is regenerated exactly from its numbers.

import { hostileCardinality } from './cardinality.js';
import { hostileCbor } from './cbor.js';
import { hostileAuthorization } from './credentials.js';
import { framingCase } from './framing.js';
import { gzipBomb, hostileHeaders, ODD_ACCEPTS, ODD_CONTENT_TYPES } from './headers.js';
import { anyValue, duplicateKey, mutateBytes, toJsonText, truncate, withInvalidUtf8, type Json } from './json-text.js';
import { hostileDocument, validObject, type FuzzResource } from './objects.js';
import { hostileJsonPatch, hostileMergePatch, PATCH_CONTENT_TYPE, type PatchType } from './patches.js';
import { hostilePath } from './paths.js';
import { Prng } from './prng.js';
import { hostileProtobuf } from './protobuf.js';
import { hostileQuery } from './queries.js';
import type { Caller, FuzzRequest } from './request.js';
import { hostileYaml, yamlDocument } from './yaml-text.js';

/** where the fuzz cases aim: objects they may change, and those they must never change */
export interface FuzzTargets {
  /** the namespace the limited user may write ConfigMaps and Secrets in */
  namespace: string;
  /** another namespace, only ever named in bodies that must be refused */
  otherNamespace: string;
  /** the name of the ConfigMap, Secret and Pod in `namespace` that cases update, patch and delete */
  target: string;
  /** the name of objects no case may change (in both namespaces) */
  sentinel: string;
}

/** the top-level input kinds; a local run may leave out kinds (KAPI_FUZZ_SKIP), matched as parts of FuzzRequest.kind */
export const CASE_KINDS = ['body', 'patch', 'delete', 'review', 'query', 'path', 'header', 'framing', 'credential', 'cardinality'] as const;

const RESOURCES: FuzzResource[] = ['configmaps', 'secrets', 'pods'];
type BodyMedia = 'json' | 'yaml' | 'protobuf' | 'cbor';
const MEDIA_TYPE: Record<BodyMedia, string> = {
  json: 'application/json',
  yaml: 'application/yaml',
  protobuf: 'application/vnd.kubernetes.protobuf',
  cbor: 'application/cbor',
};

function collectionPath(t: FuzzTargets, resource: FuzzResource): string {
  return `/api/v1/namespaces/${t.namespace}/${resource}`;
}

function objectPath(t: FuzzTargets, resource: FuzzResource, name = t.target): string {
  return `${collectionPath(t, resource)}/${name}`;
}

function freshName(rng: Prng): string {
  return `fuzz-${rng.string(8, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
}

function accept(rng: Prng): string {
  return rng.bool(0.85) ? 'application/json' : rng.pick([...ODD_ACCEPTS, 'application/vnd.kubernetes.protobuf']);
}

/** a document as bytes of `media`, broken at the text level or not */
function encodeBody(doc: Json, media: 'json' | 'yaml', rng: Prng): { body: Buffer; how: string; breaks: boolean } {
  const text = media === 'json' ? toJsonText(doc) : yamlDocument(doc, rng);
  switch (rng.int(0, 6)) {
    case 0:
      return { body: truncate(Buffer.from(text), rng), how: 'truncated', breaks: false };
    case 1:
      return { body: mutateBytes(Buffer.from(text), rng), how: 'mutated', breaks: false };
    case 2:
      return { body: Buffer.from(media === 'json' ? duplicateKey(text, rng) : text), how: 'duplicate-key', breaks: false };
    case 3:
      return { body: withInvalidUtf8(text, rng), how: 'invalid-utf8', breaks: false };
    case 4: {
      if (media === 'yaml') {
        const y = hostileYaml(text, rng);
        return { body: Buffer.from(y.text), how: `yaml-${y.how}`, breaks: false };
      }
      return { body: Buffer.from(text + rng.pick(['}', ']', ',', ' {}', '\u0000', '\n\n{"x":1}'])), how: 'trailing', breaks: false };
    }
    default:
      return { body: Buffer.from(text), how: 'structural', breaks: false };
  }
}

function caller(rng: Prng): Caller {
  return rng.bool(0.35) ? 'limited' : 'admin';
}

function base(rng: Prng, kind: string, method: string, path: string, who: Caller = caller(rng)): FuzzRequest {
  return { kind, protocol: rng.bool() ? 'h2' : 'http/1.1', caller: who, method, path, headers: { accept: accept(rng) } };
}

function bodyCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const resource = rng.pick(RESOURCES);
  const update = rng.bool(0.4);
  const media = rng.pick<BodyMedia>(['json', 'json', 'yaml', 'protobuf', 'cbor']);
  const name = update ? t.target : freshName(rng);
  const req = base(rng, '', update ? 'PUT' : 'POST', update ? objectPath(t, resource) : collectionPath(t, resource));
  if (rng.bool(0.3)) req.path += `?${rng.pick(['dryRun=All', 'fieldValidation=Strict', 'fieldValidation=Ignore', 'fieldManager=fuzz'])}`;
  req.headers['content-type'] = MEDIA_TYPE[media];
  if (media === 'protobuf') {
    const kind = resource === 'secrets' ? 'Secret' : 'ConfigMap';
    const p = hostileProtobuf(kind, rng.bool(0.1) ? t.sentinel : name, t.namespace, rng);
    req.body = p.body;
    req.kind = `body.protobuf.${p.how}`;
    return req;
  }
  const valid = validObject(resource, name, rng.bool() ? t.namespace : undefined, rng);
  if (media === 'cbor') {
    const c = hostileCbor(valid, rng);
    req.body = c.body;
    req.kind = `body.cbor.${c.how}`;
    if (rng.bool(0.5)) req.headers.accept = 'application/cbor';
    return req;
  }
  const hostile = hostileDocument(valid, rng, { name: t.sentinel, namespace: t.otherNamespace });
  const encoded = encodeBody(hostile.doc, media, rng);
  req.body = encoded.body;
  req.kind = `body.${media}.${hostile.how}.${encoded.how}`;
  // only a document that reached the decoder intact keeps the document's verdict
  // a create of a Pod named like the sentinels is valid: only ConfigMap and Secret sentinels exist
  const namesFreeName = hostile.how === 'names-another-object' && !update && resource === 'pods';
  req.mustFail = hostile.mustFail && !namesFreeName && encoded.how === 'structural' && (hostile.how !== 'deep' || media === 'json');
  return req;
}

function patchCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const type = rng.pick<PatchType>(['json', 'merge', 'strategic', 'apply']);
  const resource = rng.pick(RESOURCES);
  const req = base(rng, '', 'PATCH', objectPath(t, resource));
  req.headers['content-type'] = PATCH_CONTENT_TYPE[type];
  const query: string[] = [];
  if (type === 'apply' || rng.bool(0.2)) query.push(`fieldManager=${rng.pick(['fuzz', 'other', 'x'.repeat(129), ''])}`);
  if (rng.bool(0.3)) query.push(rng.pick(['force=true', 'dryRun=All', 'fieldValidation=Strict']));
  if (query.length) req.path += `?${query.join('&')}`;
  let text: string;
  let how: string;
  if (type === 'json') {
    ({ text, how, mustFail: req.mustFail } = hostileJsonPatch(rng));
  } else if (type === 'merge' || type === 'strategic') {
    ({ text, how, mustFail: req.mustFail } = hostileMergePatch(type, rng));
  } else if (rng.bool(0.25)) {
    const c = hostileCbor(validObject(resource, t.target, undefined, rng), rng);
    req.headers['content-type'] = 'application/apply-patch+cbor';
    req.body = c.body;
    req.kind = `patch.apply-cbor.${c.how}`;
    return req;
  } else {
    const valid = validObject(resource, t.target, undefined, rng);
    const hostile = hostileDocument(valid, rng, { name: t.sentinel, namespace: t.otherNamespace });
    const encoded = encodeBody(hostile.doc, 'yaml', rng);
    req.body = encoded.body;
    req.kind = `patch.apply.${hostile.how}.${encoded.how}`;
    return req;
  }
  const bytes = Buffer.from(text);
  const broken = rng.int(0, 9);
  if (broken === 0) {
    req.body = truncate(bytes, rng);
    req.mustFail = false;
    how += '.truncated';
  } else if (broken === 1) {
    req.body = withInvalidUtf8(text, rng);
    req.mustFail = false;
    how += '.invalid-utf8';
  } else {
    req.body = bytes;
  }
  req.kind = `patch.${type}.${how}`;
  return req;
}

function deleteOptions(rng: Prng): Json {
  const o: { [k: string]: Json } = {
    kind: rng.pick(['DeleteOptions', 'Status', 'ConfigMap', '']),
    apiVersion: rng.pick(['v1', 'meta.k8s.io/v1', 'v2', '']),
  };
  for (const field of ['gracePeriodSeconds', 'propagationPolicy', 'dryRun', 'orphanDependents', 'preconditions']) {
    if (!rng.bool(0.4)) continue;
    o[field] = rng.bool(0.5)
      ? anyValue(rng)
      : rng.pick<Json>([
          -1,
          0,
          2 ** 63,
          'Orphan',
          'Foreground',
          'bogus',
          ['All'],
          ['All', 'x'],
          true,
          { uid: 'not-the-uid' },
          { resourceVersion: '1' },
        ]);
  }
  return o;
}

function deleteCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const resource = rng.pick(RESOURCES);
  // mostly a dry run: a real delete only removes the target, which is made again after the batch
  const req = base(
    rng,
    'delete',
    'DELETE',
    `${objectPath(t, resource, rng.bool(0.8) ? t.target : freshName(rng))}${rng.bool(0.7) ? '?dryRun=All' : ''}`,
  );
  const media = rng.pick<'json' | 'yaml'>(['json', 'yaml']);
  const encoded = encodeBody(deleteOptions(rng), media, rng);
  req.headers['content-type'] = MEDIA_TYPE[media];
  req.body = encoded.body;
  req.kind = `delete.${media}.${encoded.how}`;
  return req;
}

function reviewCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const api = rng.pick<{ path: string; kind: string; apiVersion: string; spec: Json }>([
    {
      path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      spec: { resourceAttributes: { namespace: t.namespace, verb: 'get', resource: 'configmaps' } },
    },
    {
      path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      kind: 'SelfSubjectRulesReview',
      apiVersion: 'authorization.k8s.io/v1',
      spec: { namespace: t.namespace },
    },
    {
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      spec: {},
    },
    {
      path: '/apis/authentication.k8s.io/v1/tokenreviews',
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      spec: { token: 'x.y.z' },
    },
  ]);
  const req = base(rng, '', 'POST', api.path);
  const media = rng.pick<Exclude<BodyMedia, 'cbor'>>(['json', 'yaml', 'yaml', 'protobuf']);
  req.headers['content-type'] = MEDIA_TYPE[media];
  if (media === 'protobuf') {
    const p = hostileProtobuf('ConfigMap', 'x', undefined, rng);
    req.body = p.body;
    req.kind = `review.protobuf.${p.how}`;
    return req;
  }
  const doc: { [k: string]: Json } = { kind: api.kind, apiVersion: api.apiVersion, spec: api.spec };
  const hostile = hostileDocument(doc, rng, { name: t.sentinel, namespace: t.otherNamespace });
  const encoded = encodeBody(hostile.doc, media, rng);
  req.body = encoded.body;
  req.kind = `review.${media}.${hostile.how}.${encoded.how}`;
  return req;
}

function queryCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const resource = rng.pick(RESOURCES);
  const named = rng.bool(0.4);
  const method = named ? rng.pick(['GET', 'GET', 'DELETE', 'PATCH', 'PUT']) : rng.pick(['GET', 'GET', 'POST']);
  const req = base(rng, 'query', method, `${named ? objectPath(t, resource) : collectionPath(t, resource)}?${hostileQuery(rng)}`);
  if (method === 'DELETE') req.path += '&dryRun=All';
  if (method !== 'GET' && method !== 'DELETE') {
    const doc = validObject(resource, named ? t.target : freshName(rng), undefined, rng);
    req.headers['content-type'] = method === 'PATCH' ? rng.pick(Object.values(PATCH_CONTENT_TYPE)) : 'application/json';
    req.body = Buffer.from(req.headers['content-type'] === PATCH_CONTENT_TYPE.json ? '[]' : toJsonText(doc));
  }
  req.kind = `query.${method}.${named ? 'object' : 'collection'}`;
  return req;
}

function pathCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const resource = rng.pick(RESOURCES);
  const method = rng.pick(['GET', 'GET', 'DELETE', 'PUT', 'PATCH', 'POST', 'HEAD', 'OPTIONS', 'TRACE', 'FOO']);
  // a path that resolves wrongly could name a collection or the namespace (a `?` in it cuts
  // `/api/v1/namespaces/fuzz-a/?/target` down to the namespace): the admin only writes as a
  // dry run there, and the limited user has no collection or namespace rights
  const who = caller(rng);
  let path = hostilePath(rng, t.namespace, resource, t.target);
  if (method !== 'GET' && method !== 'HEAD' && who === 'admin') path += `${path.includes('?') ? '&' : '?'}dryRun=All`;
  const req = base(rng, `path.${method}`, method, path, who);
  if (['PUT', 'PATCH', 'POST'].includes(method)) {
    req.headers['content-type'] = method === 'PATCH' ? PATCH_CONTENT_TYPE.merge : 'application/json';
    req.body = Buffer.from(
      toJsonText(method === 'PATCH' ? { metadata: { labels: { fuzz: 'x' } } } : validObject(resource, t.target, undefined, rng)),
    );
  }
  return req;
}

function headerCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const resource = rng.pick<FuzzResource>(['configmaps', 'secrets']);
  const write = rng.bool(0.6);
  const h = hostileHeaders(rng);
  const who: Caller = h.how.startsWith('impersonate') ? 'limited' : caller(rng);
  const req = base(
    rng,
    `header.${h.how}`,
    write ? 'POST' : 'GET',
    `${write ? `${collectionPath(t, resource)}?dryRun=All` : objectPath(t, resource)}`,
    who,
  );
  Object.assign(req.headers, h.headers);
  if (write) {
    const json = Buffer.from(toJsonText(validObject(resource, freshName(rng), undefined, rng)));
    req.headers['content-type'] ??= 'application/json';
    if (rng.bool(0.3)) req.headers['content-type'] = rng.pick(ODD_CONTENT_TYPES);
    req.body = h.gzipBody ? (rng.bool() ? gzipBomb() : Buffer.from(json)) : json;
  }
  if (rng.bool(0.2)) req.headers.accept = rng.pick(ODD_ACCEPTS);
  // an empty Impersonate-User is no impersonation (kube reads it as absent)
  if (h.how === 'impersonate' && h.headers['impersonate-user'] !== '') req.mustFail = true;
  return req;
}

/** a request from a client without a certificate whose only credential is a hostile
 *  Authorization header: never accepted (kube answers 401, or 403 for what falls back to the
 *  anonymous user) */
function credentialCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const resource = rng.pick<FuzzResource>(['configmaps', 'secrets']);
  const write = rng.bool(0.3);
  const auth = hostileAuthorization(rng);
  const req = base(
    rng,
    `credential.${auth.how}`,
    write ? 'POST' : 'GET',
    write ? `${collectionPath(t, resource)}?dryRun=All` : objectPath(t, resource),
    'limited',
  );
  req.headers.authorization = auth.value;
  if (write) {
    req.headers['content-type'] = 'application/json';
    req.body = Buffer.from(toJsonText(validObject(resource, freshName(rng), undefined, rng)));
  }
  req.mustFail = true;
  return req;
}

/** a body of tens of thousands of members (cardinality.ts), as either caller */
function cardinalityCase(rng: Prng, t: FuzzTargets): FuzzRequest {
  const c = hostileCardinality(rng, t.target);
  const collection = c.resource === 'deployments' ? `/apis/apps/v1/namespaces/${t.namespace}/deployments` : collectionPath(t, c.resource);
  const path = `${collection}${c.name ? `/${c.name}` : ''}?${c.query}`;
  // only the admin may patch Deployments: the limited user's 403 would skip the merge
  const req = base(rng, `cardinality.${c.how}`, c.method, path, c.resource === 'deployments' ? 'admin' : caller(rng));
  req.headers['content-type'] = c.contentType;
  req.body = c.body;
  return req;
}

const GENERATORS: Record<(typeof CASE_KINDS)[number], (rng: Prng, t: FuzzTargets) => FuzzRequest> = {
  body: bodyCase,
  patch: patchCase,
  delete: deleteCase,
  review: reviewCase,
  query: queryCase,
  path: pathCase,
  header: headerCase,
  framing: framingCase,
  credential: credentialCase,
  cardinality: cardinalityCase,
};

/** the request of case `index` under `seed`, or undefined when its kind is skipped */
export function generateCase(seed: number, index: number, targets: FuzzTargets, skip: readonly string[] = []): FuzzRequest | undefined {
  const rng = Prng.forCase(seed, index);
  const kind = rng.pick(CASE_KINDS);
  const req = GENERATORS[kind](rng, targets);
  if (skip.some((s) => req.kind.includes(s))) return undefined;
  if (req.body && req.body.length > 3 * 1024 * 1024 + 1024 && !req.headers['content-encoding']) req.mustFail = true;
  return req;
}
