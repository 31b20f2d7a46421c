// Request bodies: read with a size limit, decoded by Content-Type, and checked against the
// kind and version the endpoint serves.

import type { KubeObject } from '../../storage/interface.js';
import { decodeBody, mediaTypeOf, negotiateInput, YAML_MEDIA_TYPE, type MediaFormat } from '../request/negotiation.js';
import { errors, StatusError } from '../machinery/status.js';
import { header, type RequestState } from '../request/types.js';
import { apiVersionOf, type Scope } from './scope.js';
import { decodeYamlBody } from './field-validation-yaml.js';
import { bodyBudget, LARGE_BODY_BYTES } from '../request/body-budget.js';
import { decodeYamlOffThread, YAML_THREAD_BYTES } from '../request/yaml-thread.js';
import { abortReasonOf, prematureClose } from '../request/cancellation.js';
import { APPLY_PATCH_TYPE } from './patch/appliers.js';

/** Reads the whole body; 413 past `limit` bytes. A large body then holds its size in the
 *  replica's body budget until the response closes (request/body-budget.ts), waiting for room.
 *  A large YAML body is decoded on the YAML thread before the handler decodes it (request/
 *  yaml-thread.ts), so that its parse does not stall the event loop. */
export async function readBody(state: RequestState, limit: number): Promise<Buffer> {
  const body = await readWholeBody(state, limit);
  if (body.length >= LARGE_BODY_BYTES) await holdUntilAnswered(state, body.length);
  if (body.length >= YAML_THREAD_BYTES && isYamlBody(header(state.req, 'content-type'))) await decodeYamlOffThread(body, state.signal);
  return body;
}

/** the Content-Types whose bodies the YAML decoder reads */
function isYamlBody(contentType: string | undefined): boolean {
  const base = mediaTypeOf(contentType);
  return base === YAML_MEDIA_TYPE || base === APPLY_PATCH_TYPE;
}

async function holdUntilAnswered(state: RequestState, bytes: number): Promise<void> {
  const release = await bodyBudget().hold(bytes, state.signal);
  // a response that closed while the body waited (deadline, client gone) emits no more 'close'
  if (state.cancelled || state.res.writableEnded) {
    release();
    throw abortReasonOf(state.signal);
  }
  state.res.once('close', release);
}

/** Events rather than an async iterator: an iterator costs a promise per chunk and a
 *  per-request setup that showed in the profile of every write. Past the limit the request
 *  stream is destroyed, as leaving the iterator did. */
async function readWholeBody(state: RequestState, limit: number): Promise<Buffer> {
  const declared = Number(header(state.req, 'content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    state.req.resume();
    throw errors.tooLarge(`limit is ${limit}`);
  }
  const req = state.req;
  if (req.readableEnded) return Buffer.alloc(0);
  if (req.destroyed) throw prematureClose();
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const observe = state.bodyObserver;
    const onData = (chunk: Buffer | string): void => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      observe?.(buf);
      total += buf.length;
      if (total > limit) {
        stop();
        req.destroy();
        reject(errors.tooLarge(`limit is ${limit}`));
        return;
      }
      chunks.push(buf);
    };
    const onEnd = (): void => {
      stop();
      // a body that came in one chunk is that chunk (node hands each one out once)
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    };
    const onError = (err: Error): void => {
      stop();
      reject(err);
    };
    const onClose = (): void => {
      stop();
      reject(prematureClose());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function summarize(body: Buffer, max = 30): string {
  if (body.length === 0) return '<empty>';
  const text = body.toString('utf8');
  return text.length > max ? `${text.slice(0, max)} ...` : text;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Decodes a body as an object of the scope's kind. Missing kind/apiVersion are defaulted
 *  (as kube-apiserver's decoder does); different ones are refused. */
export function decodeObject(scope: Scope, body: Buffer, format: MediaFormat): KubeObject {
  const expected = scope.kind;
  const unrecognized = (why: string) =>
    errors.badRequest(
      `the object provided is unrecognized (must be of type ${expected.kind}): couldn't get version/kind; json parse error: ${why} (${summarize(body)})`,
    );
  if (body.length === 0 && format !== 'cbor') throw unrecognized('unexpected end of JSON input');
  let value: unknown;
  try {
    value = format === 'yaml' ? decodeYamlBody(body) : decodeBody(body, format);
  } catch (err) {
    // a protobuf body of a kind without a protobuf form
    if (err instanceof StatusError && err.code === 415) throw err;
    // CBOR's messages are its decoder's own
    if (err instanceof StatusError && format === 'cbor') throw err;
    throw unrecognized((err as Error).message);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw unrecognized(
      `json: cannot unmarshal ${typeName(value)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  const raw = value as Record<string, unknown>;
  const kind = raw.kind;
  const apiVersion = raw.apiVersion;
  if (kind !== undefined && typeof kind !== 'string') throw unrecognized('json: cannot unmarshal kind');
  if (apiVersion !== undefined && typeof apiVersion !== 'string') throw unrecognized('json: cannot unmarshal apiVersion');
  const expectedApiVersion = apiVersionOf(expected);
  const givenKind = kind || expected.kind;
  const givenApiVersion = apiVersion || expectedApiVersion;
  if (givenKind !== expected.kind) {
    const version = givenApiVersion.includes('/') ? givenApiVersion.split('/')[1] : givenApiVersion;
    throw errors.badRequest(
      `${givenKind} in version ${JSON.stringify(version)} cannot be handled as a ${expected.kind}: no kind ${JSON.stringify(givenKind)} is registered for version ${JSON.stringify(givenApiVersion)}`,
    );
  }
  if (givenApiVersion !== expectedApiVersion) {
    throw errors.badRequest(
      `the API version in the data (${givenApiVersion}) does not match the expected API version (${expectedApiVersion})`,
    );
  }
  const metadata = raw.metadata;
  if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
    throw errors.badRequest(
      `${expected.kind} in version ${JSON.stringify(expected.version)} cannot be handled as a ${expected.kind}: json: cannot unmarshal ${typeName(metadata)} into Go struct field ${expected.kind}.metadata of type v1.ObjectMeta`,
    );
  }
  // kind, apiVersion and metadata lead, as in every object kube-apiserver serializes
  const { kind: _kind, apiVersion: _apiVersion, metadata: _metadata, ...rest } = raw;
  return {
    kind: givenKind,
    apiVersion: givenApiVersion,
    metadata: (metadata as KubeObject['metadata'] | null | undefined) ?? {},
    ...rest,
  };
}

/** Decodes a body that is not an API object of the endpoint (DeleteOptions, patches). */
export function decodeLoose(body: Buffer, format: MediaFormat): unknown {
  return decodeBody(body, format);
}

/** the body's format from its Content-Type (415 for unknown ones) */
export function bodyFormat(state: RequestState): MediaFormat {
  return negotiateInput(header(state.req, 'content-type'), state.cbor === true);
}

/** The namespace rule of kube-apiserver's EnsureObjectNamespaceMatchesRequestNamespace. */
export function ensureNamespace(obj: KubeObject, requestNamespace: string): void {
  const objNamespace = obj.metadata.namespace ?? '';
  if (objNamespace === requestNamespace) return;
  if (objNamespace === '') {
    if (requestNamespace !== '') obj.metadata.namespace = requestNamespace;
    return;
  }
  if (requestNamespace === '') {
    delete obj.metadata.namespace;
    return;
  }
  throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
}

/** system fields a client cannot set on create (the registry fills them) */
export function wipeSystemFields(obj: KubeObject): void {
  const m = obj.metadata;
  delete m.creationTimestamp;
  delete m.uid;
  delete m.deletionTimestamp;
  delete m.deletionGracePeriodSeconds;
  delete m.selfLink;
}
