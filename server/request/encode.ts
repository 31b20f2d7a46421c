// Serialization of response bodies the way kube-apiserver's serializers write them.

import { stringify as stringifyYaml, type Tags } from 'yaml';
import { goEscape } from '../machinery/go-json.js';
import { GO_QUOTED_STRINGS } from './yaml-scalars.js';

export { goEscape };

/** compact JSON followed by a newline (Go's json.Encoder), or 2-space indented when pretty */
export function encodeJson(value: unknown, pretty = false): string {
  return goEscape(pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value)) + '\n';
}

/** YAML as sigs.k8s.io/yaml writes it: map keys sorted, list items not indented, strings quoted
 *  wherever go-yaml v2 (and so any YAML 1.1 reader) would read them as something else */
export function encodeYaml(value: unknown): string {
  return stringifyYaml(value, {
    sortMapEntries: true,
    indentSeq: false,
    lineWidth: 0,
    aliasDuplicateObjects: false,
    customTags: (tags: Tags) => [GO_QUOTED_STRINGS, ...tags],
  });
}
