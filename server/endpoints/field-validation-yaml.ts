// Repeated keys in a YAML body, reported as kube-apiserver reports them. Its YAML decoder turns
// YAML into JSON (the last of repeated keys wins); in strict and warn modes it reads the body a
// second time with go-yaml's strict decoder, whose single error lists every repeat with the line
// of the repeated key's value:
//
//   yaml: unmarshal errors:
//     line 7: key "a" already set in map
//
// kube-apiserver turns that error into one warning per line (`line 7: key "a" already set in map`).

import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node } from 'yaml';
import { MAX_NESTING_DEPTH, yamlTooDeep } from '../limits/decode-limits.js';
import { goQuote } from '../machinery/validation/field-error.js';

export const YAML_ERRORS_PREFIX = 'yaml: unmarshal errors:\n';

/** how Go's %#v prints a decoded YAML map key */
function goSyntax(key: unknown): string {
  if (typeof key === 'string') return goQuote(key);
  if (key === null || key === undefined) return '<nil>';
  return String(key);
}

function keyIdentity(key: unknown): string {
  return `${typeof key}:${String(key)}`;
}

/** go-yaml's strict decoding error for `text` (its first document), or undefined */
export function yamlDuplicateKeysError(text: string): string | undefined {
  // the parser recurses per level: too deep a text is the decoder's error, not this one's
  if (yamlTooDeep(text, MAX_NESTING_DEPTH)) return undefined;
  const lines = new LineCounter();
  let docs;
  try {
    docs = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: false, prettyErrors: false });
  } catch {
    return undefined;
  }
  const list = Array.isArray(docs) ? docs : [docs];
  const doc = list.find((d) => d.contents !== null) ?? list[0];
  if (!doc || doc.errors.length > 0) return undefined;
  const found: string[] = [];
  const lineOf = (offset: number): number => lines.linePos(offset).line;

  const visit = (node: unknown, depth: number): void => {
    if (depth > MAX_NESTING_DEPTH || node === null || node === undefined || isAlias(node)) return;
    if (isSeq(node)) {
      for (const item of node.items) visit(item, depth + 1);
      return;
    }
    if (!isMap(node)) return;
    const seen = new Set<string>();
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      const key = isScalar(keyNode) ? keyNode.value : keyNode === null ? null : String(keyNode);
      // merge keys (`<<: *base`) are not members
      if (key === '<<') continue;
      // go-yaml decodes the value before it stores (and checks) the key
      visit(pair.value, depth + 1);
      const id = keyIdentity(key);
      if (seen.has(id)) {
        const valueNode = pair.value as Node | null;
        const at = valueNode?.range ? valueNode.range[0] : keyNode?.range ? keyNode.range[1] : 0;
        found.push(`line ${lineOf(at)}: key ${goSyntax(key)} already set in map`);
      }
      seen.add(id);
    }
  };
  visit(doc.contents, 0);
  return found.length === 0 ? undefined : `${YAML_ERRORS_PREFIX}  ${found.join('\n  ')}`;
}

/** kube-apiserver's warnings for one strict decoding error: a YAML error gives one per line */
export function warningsOf(strictError: string): string[] {
  if (!strictError.startsWith(YAML_ERRORS_PREFIX)) return [strictError];
  return strictError
    .slice(YAML_ERRORS_PREFIX.length)
    .split('\n')
    .map((l) => l.trim());
}
