// Serialization of response bodies the way kube-apiserver's serializers write them.

import { stringify as stringifyYaml } from 'yaml';
import { goEscape } from '../machinery/go-json.js';

export { goEscape };

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
