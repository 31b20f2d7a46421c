// Content negotiation as kube-apiserver does it: the Accept header picks the response media
// type (and an optional conversion to Table / PartialObjectMetadata), Content-Type picks how
// a request body is decoded.

import { jsonTooDeep, type TooDeep } from '../limits/decode-limits.js';
import { decodeProtobufBody, UnsupportedProtobufKind } from '../protobuf/http.js';
import { CborDecodeError, decodeCbor } from '../cbor/index.js';
import { BoundedMemo } from '../machinery/bounded-memo.js';
import { errors, type StatusError } from '../machinery/status.js';
import { decodeYamlBuffer } from './yaml.js';

export const JSON_MEDIA_TYPE = 'application/json';
export const YAML_MEDIA_TYPE = 'application/yaml';
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
export const CBOR_MEDIA_TYPE = 'application/cbor';
/** the watch stream of CBOR: RFC 8742's sequence of data items */
export const CBOR_SEQUENCE_MEDIA_TYPE = 'application/cbor-seq';

export type MediaFormat = 'json' | 'yaml' | 'protobuf' | 'cbor';

/** the media types this server can write, in preference order (the first is the default) */
const SERVED: { type: string; subtype: string; format: MediaFormat; stream: boolean }[] = [
  { type: 'application', subtype: 'json', format: 'json', stream: true },
  { type: 'application', subtype: 'yaml', format: 'yaml', stream: false },
  // built-in kinds only (EndpointRestrictions.protobuf)
  { type: 'application', subtype: 'vnd.kubernetes.protobuf', format: 'protobuf', stream: true },
  // only with the CBORServingAndStorage gate (EndpointRestrictions.cbor)
  { type: 'application', subtype: 'cbor', format: 'cbor', stream: true },
];

const CONTENT_TYPES: Record<MediaFormat, string> = {
  json: JSON_MEDIA_TYPE,
  yaml: YAML_MEDIA_TYPE,
  protobuf: PROTOBUF_MEDIA_TYPE,
  cbor: CBOR_MEDIA_TYPE,
};

export interface AcceptClause {
  type: string;
  subtype: string;
  q: number;
  params: Record<string, string>;
}

/** goautoneg's parse: clauses sorted by q, then concrete types before wildcards (stable) */
export function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const rawPart of header.split(',')) {
    const part = rawPart.trim();
    const segments = part.split(';');
    const range = segments[0].split('/');
    const type = range[0].trim();
    let subtype: string;
    if (range.length === 1 && type === '*') subtype = '*';
    else if (range.length === 2) subtype = range[1].trim();
    else continue;
    const clause: AcceptClause = { type, subtype, q: 1, params: {} };
    for (const p of segments.slice(1)) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim();
      const value = p.slice(eq + 1).trim();
      if (key === 'q') {
        const q = Number.parseFloat(value);
        clause.q = Number.isNaN(q) ? 0 : q;
      } else {
        clause.params[key] = value;
      }
    }
    clauses.push(clause);
  }
  const rank = (c: AcceptClause) => [c.q, c.type === '*' ? 0 : 1, c.subtype === '*' ? 0 : 1];
  return clauses
    .map((c, i) => ({ c, i }))
    .sort((a, b) => {
      const ra = rank(a.c);
      const rb = rank(b.c);
      for (let k = 0; k < ra.length; k++) if (ra[k] !== rb[k]) return rb[k] - ra[k];
      return a.i - b.i;
    })
    .map((x) => x.c);
}

/** parsed Accept headers by their text: a client sends the same one or two on every request */
const parsedAccepts = new BoundedMemo<readonly AcceptClause[]>(256);
const MAX_REMEMBERED_ACCEPT_LENGTH = 1024;

/** parseAccept's clauses, shared between requests: never to be changed */
function acceptClauses(header: string): readonly AcceptClause[] {
  return header.length <= MAX_REMEMBERED_ACCEPT_LENGTH ? parsedAccepts.get(header, () => parseAccept(header)) : parseAccept(header);
}

export type ConversionKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface Conversion {
  kind: string;
  group: string;
  version: string;
}

export interface OutputMediaType {
  format: MediaFormat;
  /** the Content-Type of the response */
  contentType: string;
  /** as=<kind>;g=<group>;v=<version> */
  convert?: Conversion;
  /** `pretty=1` media type parameter */
  pretty: boolean;
}

/** which conversions an endpoint can do (resource endpoints: Table when a convertor exists) */
export interface EndpointRestrictions {
  allowsConversion(convert: Conversion, format: MediaFormat): boolean;
  /** the endpoint's objects have a protobuf form (built-in kinds; not custom resources) */
  protobuf?: boolean;
  /** CBOR is served (the CBORServingAndStorage gate) */
  cbor?: boolean;
}

/** an endpoint that serves only the plain object (no Table, no metadata-only forms) */
export const noConversions: EndpointRestrictions = { allowsConversion: () => false };

/** Status errors: plain objects, which have a protobuf form */
export const statusRestrictions: EndpointRestrictions = { allowsConversion: () => false, protobuf: true };

export function isMetaGroupVersion(c: Conversion): boolean {
  return c.group === 'meta.k8s.io' && (c.version === 'v1' || c.version === 'v1beta1');
}

/** Table needs a convertor (and has no protobuf form); the metadata-only forms work for every
 *  object */
export function resourceRestrictions(tableSupported: boolean, protobuf = false, cbor = false): EndpointRestrictions {
  return {
    protobuf,
    cbor,
    allowsConversion(convert, format) {
      if (!isMetaGroupVersion(convert)) return false;
      switch (convert.kind) {
        case 'Table':
          return tableSupported && format !== 'protobuf';
        case 'PartialObjectMetadata':
        case 'PartialObjectMetadataList':
          return true;
        default:
          return false;
      }
    },
  };
}

function servedBy(restrictions: EndpointRestrictions) {
  return SERVED.filter(
    (s) => (s.format !== 'protobuf' || restrictions.protobuf === true) && (s.format !== 'cbor' || restrictions.cbor === true),
  );
}

function streamMediaType(format: MediaFormat, mediaType: string): string {
  return format === 'cbor' ? CBOR_SEQUENCE_MEDIA_TYPE : `${mediaType};stream=watch`;
}

function notAcceptable(stream: boolean, restrictions: EndpointRestrictions): StatusError {
  const served = servedBy(restrictions);
  const list = stream
    ? served.filter((s) => s.stream).map((s) => streamMediaType(s.format, `${s.type}/${s.subtype}`))
    : served.map((s) => `${s.type}/${s.subtype}`);
  return errors.notAcceptable(`only the following media types are accepted: ${list.join(', ')}`);
}

/**
 * Chooses the response media type. Protobuf is offered only where `restrictions.protobuf`
 * says the objects have a protobuf form: elsewhere a client listing protobuf and JSON gets
 * JSON, one listing only protobuf gets 406. `stream` is for watch: YAML has no stream form, so
 * a watch whose best match is YAML is refused as kube-apiserver refuses it.
 */
export function negotiateOutput(accept: string | undefined, restrictions: EndpointRestrictions, stream = false): OutputMediaType {
  if (!accept) return { format: 'json', contentType: JSON_MEDIA_TYPE, pretty: false };
  const servedHere = servedBy(restrictions);
  for (const clause of acceptClauses(accept)) {
    for (const served of servedHere) {
      const matches =
        (clause.type === served.type && (clause.subtype === served.subtype || clause.subtype === '*')) ||
        (clause.type === '*' && clause.subtype === '*') ||
        (stream && served.format === 'cbor' && clause.type === 'application' && clause.subtype === 'cbor-seq');
      if (!matches) continue;
      const chosen = acceptClauseOptions(clause, served.format, restrictions, stream);
      if (!chosen) continue;
      if (stream && !served.stream) throw notAcceptable(true, restrictions);
      return chosen;
    }
  }
  throw notAcceptable(stream, restrictions);
}

function acceptClauseOptions(
  clause: AcceptClause,
  format: MediaFormat,
  restrictions: EndpointRestrictions,
  stream: boolean,
): OutputMediaType | undefined {
  const out: OutputMediaType = {
    format,
    // kube-apiserver marks non-JSON watch streams (JSON watches say plain application/json)
    contentType:
      stream && format === 'protobuf'
        ? `${PROTOBUF_MEDIA_TYPE};stream=watch`
        : stream && format === 'cbor'
          ? CBOR_SEQUENCE_MEDIA_TYPE
          : CONTENT_TYPES[format],
    pretty: false,
  };
  let convert: Conversion | undefined;
  for (const [k, v] of Object.entries(clause.params)) {
    switch (k) {
      case 'as':
        convert = { ...(convert ?? { kind: '', group: '', version: '' }), kind: v };
        break;
      case 'g':
        convert = { ...(convert ?? { kind: '', group: '', version: '' }), group: v };
        break;
      case 'v':
        convert = { ...(convert ?? { kind: '', group: '', version: '' }), version: v };
        break;
      case 'stream':
        if (v && (!stream || v !== 'watch')) return undefined;
        break;
      case 'sv':
        // a server version for generic output; none is offered here
        if (v) return undefined;
        break;
      case 'pretty':
        out.pretty = v === '1';
        break;
      default:
        break;
    }
  }
  if (convert) {
    if (!restrictions.allowsConversion(convert, format)) return undefined;
    out.convert = convert;
  }
  return out;
}

/** a Content-Type without its parameters, lower case ('' when absent) */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

/** the format of a request body from its Content-Type (JSON when absent); `cbor` says
 *  whether the CBORServingAndStorage gate is on */
export function negotiateInput(contentType: string | undefined, cbor = false): MediaFormat {
  if (!contentType || contentType.trim() === '') return 'json';
  const base = mediaTypeOf(contentType);
  if (base === JSON_MEDIA_TYPE) return 'json';
  if (base === YAML_MEDIA_TYPE) return 'yaml';
  if (base === PROTOBUF_MEDIA_TYPE) return 'protobuf';
  if (cbor && base === CBOR_MEDIA_TYPE) return 'cbor';
  const accepted = SERVED.filter((s) => cbor || s.format !== 'cbor');
  throw errors.unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${accepted.map((s) => `${s.type}/${s.subtype}`).join(', ')}`,
  );
}

/** kube's CBOR decoder reads the kind first; a malformed body fails there */
export function decodeCborBody(body: Buffer): unknown {
  try {
    return decodeCbor(body);
  } catch (err) {
    if (err instanceof CborDecodeError) throw errors.badRequest(`unable to determine group/version/kind: ${err.message}`);
    throw err;
  }
}

/** Decodes a body to a JSON value. Malformed input is a 400 that names the problem; a
 *  protobuf body of a kind without a protobuf form (a custom resource) is a 415. */
export function decodeBody(body: Buffer, format: MediaFormat): unknown {
  if (format === 'cbor') return decodeCborBody(body);
  if (format === 'protobuf') {
    try {
      return decodeProtobufBody(body);
    } catch (err) {
      if (err instanceof UnsupportedProtobufKind) {
        throw errors.unsupportedMediaType(
          `the body of the request was in an unknown format - accepted media types include: ${JSON_MEDIA_TYPE}, ${YAML_MEDIA_TYPE}`,
        );
      }
      throw errors.badRequest(`error decoding protobuf body: ${(err as Error).message}`);
    }
  }
  if (format === 'json') {
    const tooDeep = jsonTooDeep(body);
    if (tooDeep) throw errors.badRequest(`error decoding JSON body: ${jsonDepthMessage(tooDeep)}`);
    try {
      return JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw errors.badRequest(`error decoding JSON body: ${(err as Error).message}`);
    }
  }
  return decodeYamlBuffer(body).value;
}

/** Go's scanner's words for JSON nested too deep */
export function jsonDepthMessage(tooDeep: TooDeep): string {
  return `invalid character '${tooDeep.char}' exceeded max depth`;
}
