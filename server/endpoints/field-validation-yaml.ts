// Repeated keys of YAML bodies, for field validation. The decoder (request/yaml.ts) finds them
// in the document it parses anyway; a YAML body that is JSON text was read by JSON.parse, and
// only if its text holds more members than the value does is it read again as YAML, for
// go-yaml's words. kube-apiserver turns that error into one warning per line
// (`line 7: key "a" already set in map`).

import { MAX_NESTING_DEPTH } from '../limits/decode-limits.js';
import { type DecodedYaml, decodeYamlBuffer, YAML_ERRORS_PREFIX, yamlDuplicateKeysError } from '../request/yaml.js';
import { countMembers, jsonShape } from './field-validation-json.js';

export { yamlDuplicateKeysError } from '../request/yaml.js';

/** what field validation needs of a decoded YAML body */
export interface YamlBodyFacts {
  /** the root's member names */
  topKeys: string[];
  /** go-yaml's strict error for the body's repeated keys, or undefined */
  duplicateKeys(): string | undefined;
}

/** The facts of a decoded text; duplicateKeys() must be asked before anything changes the value. */
export function yamlFacts(decoded: DecodedYaml, text: string): YamlBodyFacts {
  const value = decoded.value;
  const topKeys = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
  if (!decoded.json) {
    const found = decoded.duplicateKeys;
    return { topKeys, duplicateKeys: () => found };
  }
  // asked for only with Strict or Warn, before anything changes the value
  return {
    topKeys,
    duplicateKeys: () => (countMembers(value) !== jsonShape(text, MAX_NESTING_DEPTH).members ? yamlDuplicateKeysError(text) : undefined),
  };
}

const bodyFacts = new WeakMap<Buffer, YamlBodyFacts>();

/** Decodes a create or update's YAML body and keeps its facts for validateBodyFields, which
 *  checks the same body next (and so never parses it again). */
export function decodeYamlBody(body: Buffer): unknown {
  const decoded = decodeYamlBuffer(body);
  const text = body.toString('utf8');
  bodyFacts.set(body, yamlFacts(decoded, text));
  return decoded.value;
}

/** the facts decodeYamlBody kept of a body, else those of decoding it now */
export function yamlBodyFacts(body: Buffer): YamlBodyFacts {
  const kept = bodyFacts.get(body);
  if (kept) return kept;
  const decoded = decodeYamlBuffer(body);
  return yamlFacts(decoded, body.toString('utf8'));
}

/** kube-apiserver's warnings for one strict decoding error: a YAML error gives one per line */
export function warningsOf(strictError: string): string[] {
  if (!strictError.startsWith(YAML_ERRORS_PREFIX)) return [strictError];
  return strictError
    .slice(YAML_ERRORS_PREFIX.length)
    .split('\n')
    .map((l) => l.trim());
}
