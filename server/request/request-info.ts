// What a request is about, read from its method, path and query alone: kube-apiserver's
// RequestInfo. Authorization, audit and the endpoints all decide from this one parse.

import { parseBoolParam } from './query.js';

export interface RequestInfo {
  /** true under `/api/<v>/...` and `/apis/<g>/<v>/...` with a resource segment */
  isResourceRequest: boolean;
  path: string;
  /** API verb for resource requests; the lower-cased HTTP method otherwise */
  verb: string;
  /** `api` or `apis` */
  apiPrefix: string;
  /** '' for the core group */
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** the path after the version (and after `namespaces/<ns>/`), from the resource on */
  parts: string[];
  /** the namespace came from a `namespaces/<ns>/<resource>` prefix (not the namespace object itself) */
  namespaceInPath: boolean;
  /** the verb came from a legacy `/watch/` (or `/proxy/`) path prefix */
  verbViaPathPrefix: boolean;
  /** only for list, watch and deletecollection */
  fieldSelector?: string;
  labelSelector?: string;
}

const API_PREFIXES = new Set(['api', 'apis']);
const GROUPLESS_PREFIXES = new Set(['api']);
const SPECIAL_VERBS = new Set(['proxy', 'watch']);
const SPECIAL_VERBS_WITHOUT_SUBRESOURCES = new Set(['proxy']);
/** subresources of a namespace object, as opposed to resources inside a namespace */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const VERBS_WITH_SELECTORS = new Set(['list', 'watch', 'deletecollection']);

const METHOD_VERBS: Record<string, string> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

export function splitPath(path: string): string[] {
  // the slashes at either end trimmed without a regular expression: every request passes here
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === SLASH) start++;
  while (end > start && path.charCodeAt(end - 1) === SLASH) end--;
  return start === end ? [] : path.slice(start, end).split('/');
}

const SLASH = 0x2f;

export function nonResourceInfo(method: string, path: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
    namespaceInPath: false,
    verbViaPathPrefix: false,
  };
}

/** kube-apiserver's path-segment name rule: what may be used as a name in a URL */
export function isPathSegmentName(name: string): boolean {
  return name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}

/**
 * Parses a request. `path` is percent-decoded and not resolved: `.` and `..` are names. Throws a plain Error
 * for a `/watch` or `/proxy` prefix with nothing after it (kube-apiserver answers those 404).
 */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info = nonResourceInfo(method, path);
  let parts = splitPath(path);
  if (parts.length < 3 || !API_PREFIXES.has(parts[0])) return info;
  info.apiPrefix = parts[0];
  parts = parts.slice(1);

  if (!GROUPLESS_PREFIXES.has(info.apiPrefix)) {
    if (parts.length < 3) return info;
    info.apiGroup = parts[0];
    parts = parts.slice(1);
  }

  info.isResourceRequest = true;
  info.apiVersion = parts[0];
  parts = parts.slice(1);

  if (SPECIAL_VERBS.has(parts[0])) {
    if (parts.length < 2) {
      throw new Error(`unable to determine kind and namespace from url ${path}`);
    }
    info.verb = parts[0];
    info.verbViaPathPrefix = true;
    parts = parts.slice(1);
  } else {
    info.verb = METHOD_VERBS[method.toUpperCase()] ?? '';
  }

  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      info.namespace = parts[1];
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) {
        parts = parts.slice(2);
        info.namespaceInPath = true;
      }
    }
  }
  info.parts = parts;

  if (parts.length >= 3 && !SPECIAL_VERBS_WITHOUT_SUBRESOURCES.has(info.verb)) info.subresource = parts[2];
  if (parts.length >= 2) info.name = parts[1];
  if (parts.length >= 1) info.resource = parts[0];

  if (info.name === '' && info.verb === 'get') {
    info.verb = parseBoolParam(query, 'watch') ? 'watch' : 'list';
    const selected = exactFieldMatch(query.get('fieldSelector') ?? '', 'metadata.name');
    if (selected !== undefined && isPathSegmentName(selected)) info.name = selected;
  }
  if (info.name === '' && info.verb === 'delete') info.verb = 'deletecollection';

  // the legacy /watch/ paths do not take selectors consistently: authorization ignores them there
  if (!info.verbViaPathPrefix && VERBS_WITH_SELECTORS.has(info.verb)) {
    const fs = query.get('fieldSelector');
    const ls = query.get('labelSelector');
    if (fs !== null) info.fieldSelector = fs;
    if (ls !== null) info.labelSelector = ls;
  }
  return info;
}

/** Splits a field selector into terms, honouring `\,` `\=` `\!` `\\` escapes. */
export function fieldSelectorTerms(selector: string): { field: string; op: '=' | '==' | '!='; value: string }[] {
  const terms: { field: string; op: '=' | '==' | '!='; value: string }[] = [];
  for (const raw of splitUnescaped(selector, ',')) {
    if (raw.trim() === '') continue;
    const m = findOperator(raw);
    if (!m) continue;
    terms.push({ field: raw.slice(0, m.index).trim(), op: m.op, value: unescapeFieldValue(raw.slice(m.index + m.op.length)) });
  }
  return terms;
}

/** the value a selector requires `field` to equal exactly, if it does */
export function exactFieldMatch(selector: string, field: string): string | undefined {
  for (const t of fieldSelectorTerms(selector)) {
    if (t.field === field && (t.op === '=' || t.op === '==')) return t.value;
  }
  return undefined;
}

function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}

function findOperator(term: string): { index: number; op: '=' | '==' | '!=' } | undefined {
  for (let i = 0; i < term.length; i++) {
    const c = term[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '!' && term[i + 1] === '=') return { index: i, op: '!=' };
    if (c === '=') return { index: i, op: term[i + 1] === '=' ? '==' : '=' };
  }
  return undefined;
}

function unescapeFieldValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '\\' && i + 1 < v.length) {
      out += v[i + 1];
      i++;
    } else {
      out += v[i];
    }
  }
  return out;
}
