// Serialization of response bodies the way kube-apiserver's serializers write them.

import { stringify as stringifyYaml } from 'yaml';

// Go's encoding/json escapes these inside strings; they only ever occur inside strings in
// JSON text, so replacing them in the whole text is safe.
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
const HAS_GO_ESCAPED = /[<>&\u2028\u2029]/;
const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** JSON text with the characters Go's encoding/json escapes escaped as it does */
export function goEscape(text: string): string {
  return HAS_GO_ESCAPED.test(text) ? text.replace(GO_ESCAPED, (c) => GO_ESCAPES[c]) : text;
}

/** compact JSON followed by a newline (Go's json.Encoder), or 2-space indented when pretty */
export function encodeJson(value: unknown, pretty = false): string {
  return goEscape(pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value)) + '\n';
}

/** YAML as sigs.k8s.io/yaml writes it: map keys sorted, list items not indented */
export function encodeYaml(value: unknown): string {
  return stringifyYaml(value, {
    sortMapEntries: true,
    indentSeq: false,
    lineWidth: 0,
    aliasDuplicateObjects: false,
  });
}
