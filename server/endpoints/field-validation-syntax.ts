// Malformed JSON as kube-apiserver reports it: Go's encoding/json scanner, byte by byte, with its
// error texts ("invalid character '}' looking for beginning of object key string",
// "unexpected end of JSON input"), and kube's summary of the body (text for a JSON object,
// hex otherwise).

import type { KubeObject } from '../../storage/interface.js';
import { MAX_NESTING_DEPTH } from '../limits/decode-limits.js';
import type { MediaFormat } from '../request/negotiation.js';
import { errors, StatusError } from '../machinery/status.js';
import type { RequestContext } from '../registry/rest.js';
import { decodeObject } from './decode.js';
import { JSON_PATCH_TYPE, MERGE_PATCH_TYPE, STRATEGIC_MERGE_PATCH_TYPE } from './patch/appliers.js';
import type { PatchApplier } from './patch/types.js';
import type { Scope } from './scope.js';

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** Go's quoteChar: a byte as a quoted character, the way strconv.Quote writes string(rune(c)) */
export function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const named: Record<number, string> = { 7: '\\a', 8: '\\b', 12: '\\f', 10: '\\n', 13: '\\r', 9: '\\t', 11: '\\v', 92: '\\\\' };
  if (named[c]) return `'${named[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  // U+0080..U+009F, no-break space and soft hyphen are not printable for strconv
  if ((c >= 0x80 && c <= 0xa0) || c === 0xad) return `'\\u${c.toString(16).padStart(4, '0')}'`;
  return `'${String.fromCharCode(c)}'`;
}

type Step = (c: number) => string | undefined;

/** The error Go's json.Unmarshal gives for `data` before decoding anything, or undefined when
 *  the text is well-formed JSON. */
export function goJsonSyntaxError(data: Uint8Array): string | undefined {
  const stack: ('key' | 'value' | 'array')[] = [];
  let step: Step;
  let endTop = false;
  const bad = (c: number, context: string): string => `invalid character ${quoteChar(c)} ${context}`;

  const push = (c: number, kind: 'key' | 'array', next: Step): string | undefined => {
    stack.push(kind);
    if (stack.length > MAX_NESTING_DEPTH) return bad(c, 'exceeded max depth');
    step = next;
    return undefined;
  };
  const endValue: Step = (c) => {
    const n = stack.length;
    if (n === 0) {
      endTop = true;
      step = endTopStep;
      return endTopStep(c);
    }
    if (isSpace(c)) return undefined;
    const top = stack[n - 1];
    if (top === 'key') {
      if (c === 0x3a) {
        stack[n - 1] = 'value';
        step = beginValue;
        return undefined;
      }
      return bad(c, 'after object key');
    }
    if (top === 'value') {
      if (c === 0x2c) {
        stack[n - 1] = 'key';
        step = beginString;
        return undefined;
      }
      if (c === 0x7d) {
        stack.pop();
        return popped();
      }
      return bad(c, 'after object key:value pair');
    }
    if (c === 0x2c) {
      step = beginValue;
      return undefined;
    }
    if (c === 0x5d) {
      stack.pop();
      return popped();
    }
    return bad(c, 'after array element');
  };
  const popped = (): undefined => {
    if (stack.length === 0) endTop = true;
    step = stack.length === 0 ? endTopStep : endValue;
    return undefined;
  };
  const endTopStep: Step = (c) => (isSpace(c) ? undefined : bad(c, 'after top-level value'));
  const literal = (rest: string, name: string): Step => {
    let i = 0;
    const s: Step = (c) => {
      if (c !== rest.charCodeAt(i)) return bad(c, `in literal ${name} (expecting '${rest[i]}')`);
      i++;
      if (i === rest.length) step = endValue;
      return undefined;
    };
    return s;
  };
  const inString: Step = (c) => {
    if (c === 0x22) {
      step = endValue;
      return undefined;
    }
    if (c === 0x5c) {
      step = inStringEsc;
      return undefined;
    }
    if (c < 0x20) return bad(c, 'in string literal');
    return undefined;
  };
  const inStringEsc: Step = (c) => {
    if ([0x62, 0x66, 0x6e, 0x72, 0x74, 0x5c, 0x2f, 0x22].includes(c)) {
      step = inString;
      return undefined;
    }
    if (c === 0x75) {
      let left = 4;
      const hex: Step = (h) => {
        if (!isHex(h)) return bad(h, 'in \\u hexadecimal character escape');
        if (--left === 0) step = inString;
        return undefined;
      };
      step = hex;
      return undefined;
    }
    return bad(c, 'in string escape code');
  };
  const numberAfterZero: Step = (c) => {
    if (c === 0x2e) {
      step = (d) => {
        if (!isDigit(d)) return bad(d, 'after decimal point in numeric literal');
        step = fraction;
        return undefined;
      };
      return undefined;
    }
    if (c === 0x65 || c === 0x45) {
      step = exponentStart;
      return undefined;
    }
    step = endValue;
    return endValue(c);
  };
  const integer: Step = (c) => (isDigit(c) ? undefined : numberAfterZero(c));
  const fraction: Step = (c) => {
    if (isDigit(c)) return undefined;
    if (c === 0x65 || c === 0x45) {
      step = exponentStart;
      return undefined;
    }
    step = endValue;
    return endValue(c);
  };
  const exponentSign: Step = (c) => {
    if (!isDigit(c)) return bad(c, 'in exponent of numeric literal');
    step = exponent;
    return undefined;
  };
  const exponentStart: Step = (c) => {
    if (c === 0x2b || c === 0x2d) {
      step = exponentSign;
      return undefined;
    }
    return exponentSign(c);
  };
  const exponent: Step = (c) => {
    if (isDigit(c)) return undefined;
    step = endValue;
    return endValue(c);
  };
  const beginValue: Step = (c) => {
    if (isSpace(c)) return undefined;
    switch (c) {
      case 0x7b:
        return push(c, 'key', beginStringOrEmpty);
      case 0x5b:
        return push(c, 'array', beginValueOrEmpty);
      case 0x22:
        step = inString;
        return undefined;
      case 0x2d:
        step = (d) => {
          if (d === 0x30) {
            step = numberAfterZero;
            return undefined;
          }
          if (d >= 0x31 && d <= 0x39) {
            step = integer;
            return undefined;
          }
          return bad(d, 'in numeric literal');
        };
        return undefined;
      case 0x30:
        step = numberAfterZero;
        return undefined;
      case 0x74:
        step = literal('rue', 'true');
        return undefined;
      case 0x66:
        step = literal('alse', 'false');
        return undefined;
      case 0x6e:
        step = literal('ull', 'null');
        return undefined;
    }
    if (c >= 0x31 && c <= 0x39) {
      step = integer;
      return undefined;
    }
    return bad(c, 'looking for beginning of value');
  };
  const beginValueOrEmpty: Step = (c) => {
    if (isSpace(c)) return undefined;
    if (c === 0x5d) {
      stack.pop();
      return popped();
    }
    return beginValue(c);
  };
  const beginString: Step = (c) => {
    if (isSpace(c)) return undefined;
    if (c === 0x22) {
      step = inString;
      return undefined;
    }
    return bad(c, 'looking for beginning of object key string');
  };
  const beginStringOrEmpty: Step = (c) => {
    if (isSpace(c)) return undefined;
    if (c === 0x7d) {
      stack.pop();
      return popped();
    }
    return beginString(c);
  };

  step = beginValue;
  for (const c of data) {
    const err = step(c);
    if (err !== undefined) return err;
  }
  if (endTop) return undefined;
  // Go ends the input with a space: a number ends there, a literal cut short fails on it
  const last = step(0x20);
  if (last !== undefined) return last;
  return endTop ? undefined : 'unexpected end of JSON input';
}

/** kube-apiserver's summarizeData: the first 30 bytes, as text for a JSON object, else hex */
export function summarizeBody(body: Uint8Array, max = 30): string {
  if (body.length === 0) return '<empty>';
  const head = Buffer.from(body.subarray(0, max));
  const text = body[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return body.length > max ? `${text} ...` : text;
}

/** decodeObject's own summary (the body's text), to find it in its messages */
function textSummary(body: Buffer, max = 30): string {
  const text = body.toString('utf8');
  return text.length > max ? `${text.slice(0, max)} ...` : text;
}

/**
 * decodeObject, with kube-apiserver's texts where a JSON body does not decode: Go's syntax
 * error, and the body summarized as kube summarizes it (hex unless it starts with `{`).
 */
export function decodeObjectAsKube(scope: Scope, body: Buffer, format: MediaFormat): KubeObject {
  try {
    return decodeObject(scope, body, format);
  } catch (err) {
    if (format !== 'json' || !(err instanceof StatusError) || err.code !== 400 || body.length === 0) throw err;
    const unrecognized = `the object provided is unrecognized (must be of type ${scope.kind.kind}): `;
    const syntax = goJsonSyntaxError(body);
    if (syntax !== undefined) {
      throw errors.badRequest(`${unrecognized}couldn't get version/kind; json parse error: ${syntax} (${summarizeBody(body)})`);
    }
    const ownSummary = ` (${textSummary(body)})`;
    if (err.message.startsWith(unrecognized) && err.message.endsWith(ownSummary) && body[0] !== 0x7b) {
      throw errors.badRequest(`${err.message.slice(0, -ownSummary.length)} (${summarizeBody(body)})`);
    }
    throw err;
  }
}

/** kube-apiserver's 400 for a JSON, merge or strategic merge patch that is not JSON */
function patchSyntaxError(patchType: string, syntax: string, fieldValidation: RequestContext['fieldValidation']): StatusError {
  if (patchType === STRATEGIC_MERGE_PATCH_TYPE) return errors.badRequest(syntax);
  // Warn and Strict decode the patch strictly first; Ignore leaves it to the patch library
  if (fieldValidation !== 'Ignore') return errors.badRequest(`error decoding patch: ${syntax}`);
  return errors.badRequest(patchType === MERGE_PATCH_TYPE ? 'Invalid JSON Patch' : syntax);
}

/** applier.parse, with kube-apiserver's texts for a JSON or merge patch that is not JSON */
export function parsePatchAsKube(
  applier: PatchApplier,
  patchType: string,
  body: Buffer,
  fieldValidation: RequestContext['fieldValidation'],
): unknown {
  try {
    return applier.parse(body);
  } catch (err) {
    if (!(err instanceof StatusError) || err.code !== 400) throw err;
    if (patchType !== JSON_PATCH_TYPE && patchType !== MERGE_PATCH_TYPE) throw err;
    const syntax = goJsonSyntaxError(body);
    if (syntax === undefined) throw err;
    throw patchSyntaxError(patchType, syntax, fieldValidation);
  }
}

/** a strategic merge patch that is not JSON: kube-apiserver finds out once the object is read */
export function checkStrategicPatchSyntax(patchType: string, body: Buffer): void {
  if (patchType !== STRATEGIC_MERGE_PATCH_TYPE) return;
  try {
    JSON.parse(body.toString('utf8'));
  } catch {
    const syntax = goJsonSyntaxError(body);
    if (syntax !== undefined) throw patchSyntaxError(patchType, syntax, 'Ignore');
  }
}
