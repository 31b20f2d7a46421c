// String format rules of the Kubernetes API (qualified names, label values, DNS names, path
// segments), returning kube-apiserver's exact messages. Each check returns the list of
// problems; an empty list means valid.

import { BoundedMemo } from '../bounded-memo.js';
import { isAscii } from '../go-quote.js';

const qnameCharFmt = '[A-Za-z0-9]';
const qnameExtCharFmt = '[-A-Za-z0-9_.]';
const qualifiedNameFmt = `(${qnameCharFmt}${qnameExtCharFmt}*)?${qnameCharFmt}`;
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const qualifiedNameMaxLength = 63;
const qualifiedNameRe = new RegExp(`^${qualifiedNameFmt}$`);

const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const labelValueMaxLength = 63;
const labelValueRe = new RegExp(`^${labelValueFmt}$`);

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
export const dns1123LabelMaxLength = 63;
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
export const dns1123SubdomainMaxLength = 253;
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);

const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
export const dns1035LabelMaxLength = 63;
const dns1035LabelRe = new RegExp(`^${dns1035LabelFmt}$`);

const configMapKeyFmt = '[-._a-zA-Z0-9]+';
const configMapKeyErrMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const configMapKeyRe = new RegExp(`^${configMapKeyFmt}$`);

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

export function emptyError(): string {
  return 'must be non-empty';
}

/** kube-apiserver's RegexError: examples rendered as `(e.g. 'a',  or 'b', regex used ...)` */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let s = msg + ' (e.g. ';
  examples.forEach((ex, i) => {
    if (i > 0) s += ' or ';
    s += `'${ex}', `;
  });
  return s + `regex used for validation is '${fmt}')`;
}

/** byte length, as Go's len() counts */
function byteLength(s: string): number {
  // ASCII: the length is the byte count
  return isAscii(s) ? s.length : Buffer.byteLength(s, 'utf8');
}

/** `check` answering from the values it found valid lately: label keys and values repeat
 *  across objects, and every write checks each of them; forgotten all at once when full */
function rememberingValid(check: (value: string) => string[]): (value: string) => string[] {
  const valid = new BoundedMemo<true>(VALID_KEPT);
  return (value) => {
    if (valid.peek(value)) return [];
    const errs = check(value);
    if (errs.length === 0) valid.set(value, true);
    return errs;
  };
}

const VALID_KEPT = 4096;

export const isQualifiedName = rememberingValid(qualifiedNameErrors);

function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part ' + emptyError());
    else for (const m of isDNS1123Subdomain(prefix)) errs.push('prefix part ' + m);
  } else {
    return [
      'a qualified name ' +
        regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part ' + emptyError());
  else if (byteLength(name) > qualifiedNameMaxLength) errs.push('name part ' + maxLenError(qualifiedNameMaxLength));
  if (!qualifiedNameRe.test(name)) {
    errs.push('name part ' + regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc'));
  }
  return errs;
}

export const isValidLabelValue = rememberingValid(labelValueErrors);

function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > labelValueMaxLength) errs.push(maxLenError(labelValueMaxLength));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > dns1123LabelMaxLength) errs.push(maxLenError(dns1123LabelMaxLength));
  if (!dns1123LabelRe.test(value)) {
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > dns1123SubdomainMaxLength) errs.push(maxLenError(dns1123SubdomainMaxLength));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > dns1035LabelMaxLength) errs.push(maxLenError(dns1035LabelMaxLength));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > dns1123SubdomainMaxLength) errs.push(maxLenError(dns1123SubdomainMaxLength));
  if (!configMapKeyRe.test(value)) errs.push(regexError(configMapKeyErrMsg, configMapKeyFmt, 'key.name', 'KEY_NAME', 'key-name'));
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isValidPathSegmentPrefix(name);
}

export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/** Validates a name or, with `prefix`, a generateName prefix. */
export type NameValidator = (name: string, prefix: boolean) => string[];

/** A generateName prefix may end in '-': validate as if it did not (kube-apiserver's mask). */
function maskTrailingDash(name: string): string {
  if (name.length > 1 && name.endsWith('-')) return name.slice(0, name.length - 2) + 'a';
  return name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameValidator = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);
export const nameIsPathSegment: NameValidator = (name, prefix) => (prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name));
