// A webhook's clientConfig as kube-apiserver checks it: exactly one of url or service; a url
// must parse as Go's net/url parses it, be https with a host and carry no user, query or
// fragment; a service needs a name, a namespace, a valid port and a path of DNS-subdomain
// segments.

import { child, fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1123Subdomain } from '../../machinery/validation/names.js';
import { isObject, type JsonObject } from '../object.js';
import { isValidPortNum } from '../validation/values.js';

/** the Service a webhook is called through */
export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

/** a webhook's clientConfig (admissionregistration.k8s.io/v1), as the admission and the CRD
 *  conversion webhook clients call it */
export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  /** base64 PEM */
  caBundle?: string;
}

interface ParsedURL {
  scheme: string;
  host: string;
  /** undefined when the URL has no `user@` part */
  user?: string;
  fragment: string;
  rawQuery: string;
}

class URLError extends Error {}

function quoteForGo(s: string): string {
  return JSON.stringify(s);
}

function hasControlByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** percent-decoding as Go's unescape checks it (a bad escape is an error) */
function checkEscapes(s: string): void {
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '%') continue;
    const hex = s.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new URLError(`invalid URL escape ${quoteForGo(s.slice(i, i + 3))}`);
    i += 2;
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** the parts of net/url.Parse that webhook validation looks at */
function parseLikeGo(raw: string): ParsedURL {
  if (hasControlByte(raw)) throw new URLError('net/url: invalid control character in URL');
  const hashAt = raw.indexOf('#');
  const beforeFragment = hashAt < 0 ? raw : raw.slice(0, hashAt);
  const fragmentRaw = hashAt < 0 ? '' : raw.slice(hashAt + 1);
  let scheme = '';
  let rest = beforeFragment;
  for (let i = 0; i < beforeFragment.length; i++) {
    const c = beforeFragment[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) break;
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new URLError('missing protocol scheme');
      scheme = beforeFragment.slice(0, i).toLowerCase();
      rest = beforeFragment.slice(i + 1);
    }
    break;
  }
  let rawQuery = '';
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  const out: ParsedURL = { scheme, host: '', fragment: '', rawQuery };
  if (!rest.startsWith('/')) {
    if (scheme === '') {
      const colon = rest.indexOf(':');
      const slash = rest.indexOf('/');
      if (colon >= 0 && (slash < 0 || colon < slash)) throw new URLError('first path segment in URL cannot contain colon');
    }
  } else if (rest.startsWith('//')) {
    const afterSlashes = rest.slice(2);
    const slash = afterSlashes.indexOf('/');
    const authority = slash < 0 ? afterSlashes : afterSlashes.slice(0, slash);
    const at = authority.lastIndexOf('@');
    let host = authority;
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      checkEscapes(userinfo);
      out.user = userinfo;
      host = authority.slice(at + 1);
    }
    const portAt = host.startsWith('[') ? host.indexOf(']:') + 1 : host.lastIndexOf(':');
    if (portAt > 0) {
      const port = host.slice(portAt);
      if (!/^:[0-9]*$/.test(port)) throw new URLError(`invalid port ${quoteForGo(port)} after host`);
    }
    checkEscapes(host);
    out.host = decode(host);
    const path = slash < 0 ? '' : afterSlashes.slice(slash);
    checkEscapes(path);
  } else {
    checkEscapes(rest);
  }
  checkEscapes(fragmentRaw);
  out.fragment = decode(fragmentRaw);
  return out;
}

const desiredFormat = '; desired format: https://host[/path]';

/** kube's ValidateWebhookURL with https forced */
export function validateWebhookURL(path: string, raw: string): FieldError[] {
  let u: ParsedURL;
  try {
    u = parseLikeGo(raw);
  } catch (err) {
    if (!(err instanceof URLError)) throw err;
    return [fieldErrors.required(path, `url must be a valid URL: parse ${quoteForGo(raw)}: ${err.message}${desiredFormat}`)];
  }
  const errs: FieldError[] = [];
  if (u.scheme !== 'https') errs.push(fieldErrors.invalid(path, u.scheme, "'https' is the only allowed URL scheme" + desiredFormat));
  if (!u.host) errs.push(fieldErrors.invalid(path, u.host, 'host must be specified' + desiredFormat));
  if (u.user !== undefined) errs.push(fieldErrors.invalid(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment) errs.push(fieldErrors.invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.rawQuery) errs.push(fieldErrors.invalid(path, u.rawQuery, 'query parameters are not permitted in the URL'));
  return errs;
}

/** kube's ValidateWebhookService. kube-apiserver 1.33 hands the service's name in as the
 *  namespace and the namespace as the name, so a missing name is reported at `.namespace`
 *  and a missing namespace at `.name`; clients see that, so we report the same. */
export function validateWebhookService(path: string, service: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = typeof service.name === 'string' ? service.name : '';
  const namespace = typeof service.namespace === 'string' ? service.namespace : '';
  if (!namespace) errs.push(fieldErrors.required(child(path, 'name')));
  if (!name) errs.push(fieldErrors.required(child(path, 'namespace')));
  const port = typeof service.port === 'number' ? service.port : 0;
  const portErrs = isValidPortNum(port);
  if (portErrs.length) errs.push(fieldErrors.invalid(child(path, 'port'), port, 'port is not valid: ' + portErrs.join(', ')));
  if (typeof service.path !== 'string') return errs;
  const urlPath = service.path;
  const pathField = child(path, 'path');
  if (urlPath === '/' || urlPath === '') return errs;
  if (urlPath === '//') return [...errs, fieldErrors.invalid(pathField, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errs.push(fieldErrors.invalid(pathField, urlPath, "must start with a '/'"));
  let toCheck = urlPath.slice(1);
  if (toCheck.endsWith('/')) toCheck = toCheck.slice(0, -1);
  toCheck.split('/').forEach((step, i) => {
    if (!step) {
      errs.push(fieldErrors.invalid(pathField, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const m of isDNS1123Subdomain(step)) errs.push(fieldErrors.invalid(pathField, urlPath, `segment[${i}]: ${m}`));
  });
  return errs;
}

/** exactly one of url or service, each checked */
export function validateClientConfig(path: string, cc: unknown): FieldError[] {
  const c = isObject(cc) ? cc : {};
  const hasURL = typeof c.url === 'string';
  const hasService = isObject(c.service);
  if (hasURL === hasService) return [fieldErrors.required(path, 'exactly one of url or service is required')];
  if (hasURL) return validateWebhookURL(child(path, 'url'), c.url as string);
  return validateWebhookService(child(path, 'service'), c.service as JsonObject);
}
